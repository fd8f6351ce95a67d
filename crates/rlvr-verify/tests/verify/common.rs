//! What the planning tests share: a suite from JSON, the execution plan of a plan.

use rlvr_verify::{ExecutionPlan, Plan, TestSuite};

/// The suite of a ground truth that must be valid.
pub fn suite(value: serde_json::Value) -> TestSuite {
    TestSuite::from_value(&value).expect("valid ground truth")
}

/// The plan's execution; the test fails when the job was decided without running.
pub fn execute(plan: Plan) -> ExecutionPlan {
    match plan {
        Plan::Execute(execution) => execution,
        Plan::Finished(result) => panic!("expected an execution plan, got {result:?}"),
    }
}
