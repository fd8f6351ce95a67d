//! Settings with which distributions forbid or cripple user namespaces, read from `/proc/sys`,
//! each with the exact reason and a one-line remedy. They explain why the sandbox's user
//! namespace could not be created; `rlvr doctor` lists them even when it could.

use std::path::Path;

use serde::Serialize;

/// A setting of this machine that restricts user namespaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Restriction {
    /// The setting, as `sysctl` names it.
    pub setting: &'static str,
    /// Its current value.
    pub value: String,
    /// What it does to the sandbox.
    pub reason: String,
    /// One command that lifts it.
    pub remedy: String,
}

fn read_setting(proc_sys: &Path, relative: &str) -> Option<String> {
    fs_err::read_to_string(proc_sys.join(relative))
        .ok()
        .map(|text| text.trim().to_owned())
}

/// The restrictions in force under `proc_sys` (normally `/proc/sys`) for a caller that is root
/// (`root`) or not. Only settings that apply to this caller are returned.
pub(crate) fn detect(proc_sys: &Path, root: bool) -> Vec<Restriction> {
    let mut found = Vec::new();
    if let Some(value) = read_setting(proc_sys, "user/max_user_namespaces")
        && value == "0"
    {
        found.push(Restriction {
            setting: "user.max_user_namespaces",
            reason:
                "user.max_user_namespaces is 0: nobody, root included, may create a user namespace"
                    .to_owned(),
            remedy: "sudo sysctl -w user.max_user_namespaces=15000".to_owned(),
            value,
        });
    }
    if root {
        return found;
    }
    if let Some(value) = read_setting(proc_sys, "kernel/unprivileged_userns_clone")
        && value == "0"
    {
        found.push(Restriction {
            setting: "kernel.unprivileged_userns_clone",
            reason: "kernel.unprivileged_userns_clone is 0 (Debian's switch): only root may create user namespaces".to_owned(),
            remedy: "sudo sysctl -w kernel.unprivileged_userns_clone=1".to_owned(),
            value,
        });
    }
    if let Some(value) = read_setting(proc_sys, "kernel/apparmor_restrict_unprivileged_userns")
        && value == "1"
    {
        found.push(Restriction {
            setting: "kernel.apparmor_restrict_unprivileged_userns",
            reason: "kernel.apparmor_restrict_unprivileged_userns is 1 (Ubuntu 23.10 and later): AppArmor gives an unconfined program no capability inside the user namespaces it creates".to_owned(),
            remedy: "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or give rlvr an AppArmor profile with the `userns,` rule: see docs/sandbox.md)".to_owned(),
            value,
        });
    }
    found
}

/// Why the sandbox's user namespace could not be created, for the refusal and `rlvr doctor`:
/// the first restriction that explains `failure`, with its remedy, else the failure itself with
/// the usual suspects.
pub(crate) fn explain(failure: &str, restrictions: &[Restriction]) -> String {
    match restrictions.first() {
        Some(restriction) => format!(
            "cannot create a user namespace ({failure}): {}; remedy: {}",
            restriction.reason, restriction.remedy
        ),
        None => format!(
            "cannot create a user namespace ({failure}); no sysctl of this machine forbids it, so a container's seccomp profile or a security module probably does; remedy: run rlvr as root, or allow user namespaces in the container (e.g. docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc_sys(settings: &[(&str, &str)]) -> tempfile::TempDir {
        let directory = tempfile::tempdir().expect("temp dir");
        for (relative, value) in settings {
            let path = directory.path().join(relative);
            fs_err::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs_err::write(path, format!("{value}\n")).expect("write");
        }
        directory
    }

    #[test]
    fn issue_15_each_distribution_switch_is_named_with_its_remedy() {
        let directory = proc_sys(&[
            ("user/max_user_namespaces", "0"),
            ("kernel/unprivileged_userns_clone", "0"),
            ("kernel/apparmor_restrict_unprivileged_userns", "1"),
        ]);
        let found = detect(directory.path(), false);
        let settings: Vec<&str> = found.iter().map(|entry| entry.setting).collect();
        assert_eq!(
            settings,
            [
                "user.max_user_namespaces",
                "kernel.unprivileged_userns_clone",
                "kernel.apparmor_restrict_unprivileged_userns"
            ]
        );
        assert_eq!(
            found[1].remedy,
            "sudo sysctl -w kernel.unprivileged_userns_clone=1"
        );
        assert!(
            found[2]
                .remedy
                .starts_with("sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0")
        );
        assert_eq!(found[0].value, "0");
    }

    #[test]
    fn issue_15_permissive_settings_and_missing_files_restrict_nothing() {
        let directory = proc_sys(&[
            ("user/max_user_namespaces", "96362"),
            ("kernel/unprivileged_userns_clone", "1"),
            ("kernel/apparmor_restrict_unprivileged_userns", "0"),
        ]);
        assert!(detect(directory.path(), false).is_empty());
        let empty = proc_sys(&[]);
        assert!(detect(empty.path(), false).is_empty());
    }

    #[test]
    fn issue_15_root_is_only_stopped_by_a_zero_namespace_count() {
        let directory = proc_sys(&[
            ("kernel/unprivileged_userns_clone", "0"),
            ("kernel/apparmor_restrict_unprivileged_userns", "1"),
        ]);
        assert!(detect(directory.path(), true).is_empty());
        let zero = proc_sys(&[("user/max_user_namespaces", "0")]);
        assert_eq!(detect(zero.path(), true).len(), 1);
    }

    #[test]
    fn issue_15_the_refusal_names_the_reason_and_the_remedy() {
        let directory = proc_sys(&[("kernel/unprivileged_userns_clone", "0")]);
        let message = explain(
            "clone(CLONE_NEWUSER): Operation not permitted",
            &detect(directory.path(), false),
        );
        assert_eq!(
            message,
            "cannot create a user namespace (clone(CLONE_NEWUSER): Operation not permitted): kernel.unprivileged_userns_clone is 0 (Debian's switch): only root may create user namespaces; remedy: sudo sysctl -w kernel.unprivileged_userns_clone=1"
        );
        let unexplained = explain("clone(CLONE_NEWUSER): Operation not permitted", &[]);
        assert!(
            unexplained.contains("remedy: run rlvr as root"),
            "{unexplained}"
        );
    }
}
