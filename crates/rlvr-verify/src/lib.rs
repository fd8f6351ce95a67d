//! Turn a model response and a record's tests into a reward: extraction, profiles, output
//! comparison, scoring, and the scheduler that runs tests through the sandbox.
