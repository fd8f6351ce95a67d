//! Tampering: what a solution tried that an honest program has no reason to do, as observed
//! while its tests ran (issue 12, "Beyond the peers"). It is telemetry for the trainer, not
//! the defence: the referee, the comparators and the sandbox decide the reward whatever is
//! recorded here. Each test records a set of kinds; a job counts, per kind, the tests in which
//! it was seen.

use std::collections::BTreeMap;

/// One kind of tampering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TamperKind {
    /// A signal sent to another process (the runner, a sibling), `os.kill`/`os.killpg`.
    Signal,
    /// Resource limits of another process (`resource.prlimit` with a pid).
    Prlimit,
    /// Frame or code introspection from the solution: `sys._getframe`, `inspect`,
    /// `sys._current_frames`, `f_code`, `gi_frame`, `tb_frame`, `__code__`.
    FrameIntrospection,
    /// `sys.settrace` or `sys.setprofile` (line jumps need a trace function).
    Tracing,
    /// `gc.get_referrers`, `gc.get_referents`, `gc.get_objects`.
    GcIntrospection,
    /// Any use of `ctypes` (reading or writing raw memory).
    Ctypes,
    /// The program ended (`exit()`, `sys.exit(0)`, `os._exit`) before a functional test's
    /// code ran to its end, with status 0.
    EarlyExit,
    /// A system call the sandbox's seccomp filter refused by killing the process (SIGSYS).
    SeccompKill,
    /// The probe report of a split functional test was not what the runner writes.
    ForgedReport,
}

impl TamperKind {
    /// Every kind, in report order.
    pub const ALL: [Self; 9] = [
        Self::Signal,
        Self::Prlimit,
        Self::FrameIntrospection,
        Self::Tracing,
        Self::GcIntrospection,
        Self::Ctypes,
        Self::EarlyExit,
        Self::SeccompKill,
        Self::ForgedReport,
    ];

    /// The name used in JSON, summaries and metrics (the runner's sensor uses the same).
    pub fn name(self) -> &'static str {
        match self {
            Self::Signal => "signal",
            Self::Prlimit => "prlimit",
            Self::FrameIntrospection => "frame_introspection",
            Self::Tracing => "tracing",
            Self::GcIntrospection => "gc_introspection",
            Self::Ctypes => "ctypes",
            Self::EarlyExit => "early_exit",
            Self::SeccompKill => "seccomp_kill",
            Self::ForgedReport => "forged_report",
        }
    }

    /// The kind a name (as the runner's sensor writes it) stands for.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// The kinds seen in one test (a small set, `Copy`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Tampering(u16);

impl Tampering {
    /// Adds a kind.
    pub fn insert(&mut self, kind: TamperKind) {
        self.0 |= kind.bit();
    }

    /// Whether a kind was seen.
    pub fn contains(self, kind: TamperKind) -> bool {
        self.0 & kind.bit() != 0
    }

    /// Nothing was seen.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// The kinds seen, in report order.
    pub fn kinds(self) -> impl Iterator<Item = TamperKind> {
        TamperKind::ALL
            .into_iter()
            .filter(move |kind| self.contains(*kind))
    }

    /// Both sets.
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl FromIterator<TamperKind> for Tampering {
    fn from_iter<I: IntoIterator<Item = TamperKind>>(kinds: I) -> Self {
        let mut tampering = Self::default();
        for kind in kinds {
            tampering.insert(kind);
        }
        tampering
    }
}

impl serde::Serialize for Tampering {
    /// A list of kind names, in report order.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.kinds().map(TamperKind::name))
    }
}

/// Per kind, the number of tests of a job in which it was seen; serialized as an object of the
/// kinds seen (`{"frame_introspection": 3}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TamperCounts(BTreeMap<TamperKind, u64>);

impl TamperCounts {
    /// Counts one test's kinds.
    pub fn add(&mut self, tampering: Tampering) {
        for kind in tampering.kinds() {
            *self.0.entry(kind).or_default() += 1;
        }
    }

    /// Adds another job's counts.
    pub fn merge(&mut self, other: &Self) {
        for (kind, count) in &other.0 {
            *self.0.entry(*kind).or_default() += count;
        }
    }

    /// Nothing was seen.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The tests in which `kind` was seen.
    pub fn count(&self, kind: TamperKind) -> u64 {
        self.0.get(&kind).copied().unwrap_or(0)
    }

    /// Kinds seen with their counts, in report order.
    pub fn iter(&self) -> impl Iterator<Item = (TamperKind, u64)> + '_ {
        self.0.iter().map(|(kind, count)| (*kind, *count))
    }
}

impl serde::Serialize for TamperCounts {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter().map(|(kind, count)| (kind.name(), count)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sets_count_per_test() {
        for kind in TamperKind::ALL {
            assert_eq!(TamperKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(TamperKind::from_name("nonsense"), None);
        let first: Tampering = [TamperKind::Tracing, TamperKind::Signal]
            .into_iter()
            .collect();
        let second: Tampering = [TamperKind::Tracing].into_iter().collect();
        let mut counts = TamperCounts::default();
        counts.add(first);
        counts.add(second);
        counts.add(Tampering::default());
        assert_eq!(counts.count(TamperKind::Tracing), 2);
        assert_eq!(counts.count(TamperKind::Signal), 1);
        assert_eq!(
            serde_json::to_string(&counts).unwrap(),
            r#"{"signal":1,"tracing":2}"#
        );
        assert_eq!(
            serde_json::to_string(&first).unwrap(),
            r#"["signal","tracing"]"#
        );
    }
}
