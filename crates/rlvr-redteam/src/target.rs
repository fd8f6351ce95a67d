//! What a target is: something that scores submissions, and what it answers for each.

use crate::submission::Submission;

/// A target's answer for one submission.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A reward: `reward` as the target gave it, `scaled` mapped to [0, 1] (0: what a wrong
    /// answer gets, 1: what a right one gets).
    Scored {
        reward: f64,
        scaled: f64,
        /// What the target said beside the reward (a status, a reason), when anything.
        detail: Option<String>,
    },
    /// The target answered but gave this response no reward (a null score, an exception of
    /// the reward function, its process killed): the response voided its score.
    Void { reason: String },
    /// The target could not be asked, or answered something that is not a reward: a fault of
    /// the target or of the connection, not of the response.
    Failed { reason: String },
}

/// The rewards a target gives to a wrong and a right answer, to scale its rewards to [0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreRange {
    pub wrong: f64,
    pub right: f64,
}

impl Default for ScoreRange {
    fn default() -> Self {
        Self {
            wrong: 0.0,
            right: 1.0,
        }
    }
}

impl ScoreRange {
    /// `reward` mapped to [0, 1] (clamped: a format penalty below the wrong answer's reward is
    /// 0).
    pub fn scale(self, reward: f64) -> f64 {
        let span = self.right - self.wrong;
        if !reward.is_finite() || span <= 0.0 {
            return 0.0;
        }
        ((reward - self.wrong) / span).clamp(0.0, 1.0)
    }

    /// Reads `WRONG,RIGHT` (`-1,1`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let (wrong, right) = text
            .split_once(',')
            .ok_or_else(|| format!("{text:?}: expected WRONG,RIGHT such as 0,1"))?;
        let number = |part: &str| {
            part.trim()
                .parse::<f64>()
                .ok()
                .filter(|value| value.is_finite())
                .ok_or_else(|| format!("{part:?} is not a finite number"))
        };
        let range = Self {
            wrong: number(wrong)?,
            right: number(right)?,
        };
        if range.right <= range.wrong {
            return Err(format!(
                "the right answer's reward {} must be above the wrong answer's {}",
                range.right, range.wrong
            ));
        }
        Ok(range)
    }
}

/// A reward under test.
pub trait Target {
    /// What is measured, for the report (`profile judge`, `sandbox-fusion http://...`).
    fn describe(&self) -> String;

    /// Scores `submissions`, one outcome each, in their order. The submissions of one call
    /// are independent; they may be scored in any order or at once.
    fn score(&self, submissions: &[Submission]) -> Vec<Outcome>;

    /// Scores the phases one after the other: every submission of a phase is scored before
    /// any of the next (cross-job state: what an earlier phase left behind). A target that
    /// keeps state only inside one process scores every phase in it.
    fn score_phases(&self, phases: &[Vec<Submission>]) -> Vec<Vec<Outcome>> {
        phases.iter().map(|phase| self.score(phase)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_scale_and_parse() {
        let klear = ScoreRange::parse("-1,1").unwrap();
        assert_eq!(klear.scale(-1.0), 0.0);
        assert_eq!(klear.scale(0.0), 0.5);
        assert_eq!(klear.scale(-2.0), 0.0);
        assert_eq!(klear.scale(f64::NAN), 0.0);
        assert!(ScoreRange::parse("1,0").is_err());
        assert!(ScoreRange::parse("0").is_err());
        assert!(ScoreRange::parse("0,inf").is_err());
    }
}
