//! The relay of one judge functional test (issue 22): the test's code runs in the referee, the
//! solution in a child of the runner, and the engine carries their messages one way and the
//! other on the live pipes, while it watches the runner for the child's end and keeps the
//! test's one time limit.
//!
//! The child is the attacker: it may send garbage, huge frames or nothing, and stop reading.
//! Every descriptor the engine holds is non-blocking and every write is queued, so no child can
//! hold the engine; a frame (`rlvr-frame`: here a header alone) over the cap ends the test
//! (the referee is told the solution broke the protocol). The referee is trusted but may run
//! long on the test's own code: past the test's deadline it is abandoned (the caller replaces
//! it) and the test is a timeout.

use std::collections::VecDeque;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

use rlvr_frame::FrameBuffer;
use rlvr_referee::{Event, Judgement, Referee, RefereeOutcome};
use rlvr_runner::transport::PipeError;
use rlvr_runner::{ChildReport, Runner};
use rlvr_sandbox::wait::poll_until;
use rustix::event::{PollFd, PollFlags};

use crate::runner_start::LiveChannel;

/// Largest message a child may send in one frame (a 3-million-element answer is ~24 MB).
pub(crate) const MAX_CHILD_MESSAGE: usize = 256 << 20;
/// How long the engine waits for the runner's report after it aborted a test.
const ABORT_GRACE: Duration = Duration::from_secs(5);

/// How a live test went, for the caller to judge.
#[derive(Debug)]
pub(crate) struct LiveRun {
    /// The runner's report on the child, or why the runner failed.
    pub(crate) report: Result<ChildReport, PipeError>,
    /// The referee's verdict, unless it failed or ran out of time.
    pub(crate) judgement: Option<Judgement>,
    /// Why the referee gave no verdict.
    pub(crate) referee_failure: Option<RefereeFailure>,
    /// The child's process ended before the referee's verdict.
    pub(crate) child_ended_first: bool,
    /// The child broke the protocol (an oversized frame).
    pub(crate) protocol_violation: bool,
}

/// Why the referee gave no verdict.
#[derive(Debug)]
pub(crate) enum RefereeFailure {
    /// It was still running the test's code at the deadline.
    Deadline,
    /// It died or broke the protocol.
    Broken(PipeError),
}

/// Bytes queued for a non-blocking descriptor.
#[derive(Debug, Default)]
struct Outbox {
    queue: VecDeque<Vec<u8>>,
    offset: usize,
}

impl Outbox {
    fn push(&mut self, bytes: Vec<u8>) {
        if !bytes.is_empty() {
            self.queue.push_back(bytes);
        }
    }

    fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Bytes still to write.
    fn bytes(&self) -> usize {
        self.queue.iter().map(Vec::len).sum::<usize>() - self.offset
    }

    fn clear(&mut self) {
        self.queue.clear();
        self.offset = 0;
    }

    /// Writes what the descriptor takes now; `Err` when it is closed.
    fn flush(&mut self, fd: BorrowedFd<'_>) -> Result<(), PipeError> {
        while let Some(front) = self.queue.front() {
            match rustix::io::write(fd, &front[self.offset..]) {
                Ok(written) => {
                    self.offset += written;
                    if self.offset == front.len() {
                        self.queue.pop_front();
                        self.offset = 0;
                    }
                }
                Err(rustix::io::Errno::AGAIN) => return Ok(()),
                Err(rustix::io::Errno::INTR) => {}
                Err(rustix::io::Errno::PIPE) => return Err(PipeError::Closed),
                Err(error) => return Err(PipeError::Io(error.into())),
            }
        }
        Ok(())
    }
}

/// A message for the child: a frame whose header is the message (the referee's JSON, as it
/// came).
fn child_frame(message: &[u8]) -> Vec<u8> {
    rlvr_frame::encode_raw(message, &[])
}

/// Reads and drops whatever a dead child of an earlier test left in `fd`.
pub(crate) fn discard_pending(fd: BorrowedFd<'_>) {
    let mut buffer = [0u8; 1 << 16];
    while let Ok(read) = rustix::io::read(fd, &mut buffer) {
        if read == 0 {
            break;
        }
    }
}

/// Why the child is gone, for the referee's "ended" message.
fn ending(report: &Result<ChildReport, PipeError>) -> String {
    match report {
        Ok(report) => match (report.exit_code, report.signal) {
            (Some(code), _) => format!("the solution's process exited with status {code}"),
            (None, Some(signal)) => format!("the solution's process was killed by signal {signal}"),
            _ => "the solution's process ended".to_owned(),
        },
        Err(error) => format!("the runner failed: {error}"),
    }
}

/// The state of one relay.
struct Relay<'a> {
    runner: &'a mut Runner,
    referee: &'a mut Referee,
    channel: &'a LiveChannel,
    report_deadline: Instant,
    test_deadline: Instant,
    run: LiveRun,
    report: Option<Result<ChildReport, PipeError>>,
    /// The child's messages, each a frame that is a header alone.
    from_child: FrameBuffer,
    to_child: Outbox,
    to_referee: Outbox,
    child_gone: bool,
    aborted: bool,
}

/// Relays test `index` between the runner's child (its test already started: the runner's
/// report is due by `report_deadline`) and the referee, until both the verdict and the report
/// are in, or `test_deadline` passes.
pub(crate) fn relay(
    runner: &mut Runner,
    report_deadline: Instant,
    channel: &LiveChannel,
    referee: &mut Referee,
    index: usize,
    test_deadline: Instant,
) -> LiveRun {
    let mut relay = Relay {
        runner,
        referee,
        channel,
        report_deadline,
        test_deadline,
        run: LiveRun {
            report: Err(PipeError::Deadline),
            judgement: None,
            referee_failure: None,
            child_ended_first: false,
            protocol_violation: false,
        },
        report: None,
        from_child: FrameBuffer::default(),
        to_child: Outbox::default(),
        to_referee: Outbox::default(),
        child_gone: false,
        aborted: false,
    };
    if let Err(error) = relay.referee.begin_test(index, test_deadline) {
        relay.run.referee_failure = Some(RefereeFailure::Broken(error));
    }
    relay.run_until_done();
    let Relay {
        mut run, report, ..
    } = relay;
    if let Some(report) = report {
        run.report = report;
    }
    run
}

impl Relay<'_> {
    fn referee_done(&self) -> bool {
        self.run.judgement.is_some() || self.run.referee_failure.is_some()
    }

    fn run_until_done(&mut self) {
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            let referee_done = self.referee_done();
            if referee_done && self.report.is_some() {
                return;
            }
            let now = Instant::now();
            if !referee_done && now >= self.test_deadline {
                // The referee's own work on the test ran past its limit: it is abandoned.
                self.run.referee_failure = Some(RefereeFailure::Deadline);
                continue;
            }
            if referee_done && self.report.is_none() && !self.aborted {
                let passed = self
                    .run
                    .judgement
                    .as_ref()
                    .is_some_and(|judgement| judgement.outcome == RefereeOutcome::Pass);
                if !passed {
                    // Decided without a pass: how the child ends cannot change the verdict.
                    self.abort();
                    continue;
                }
            }
            if self.report.is_none()
                && (self.runner.report_started() || now >= self.report_deadline)
            {
                self.take_report();
                continue;
            }
            if !referee_done && self.referee.event_started() {
                self.handle_event();
                continue;
            }
            // The descriptors worth waiting on now, by role.
            let reports = self.runner.reports();
            let events = self.referee.events();
            let requests = self.referee.requests();
            let mut roles = Vec::with_capacity(5);
            let mut fds = Vec::with_capacity(5);
            if self.report.is_none() {
                roles.push(Role::Report);
                fds.push(PollFd::new(&reports, PollFlags::IN));
            }
            if !self.child_gone {
                // Nothing is read from a child the referee no longer listens to, nor while the
                // referee has not taken what came before (a child cannot flood the engine).
                if !referee_done && self.to_referee.bytes() < MAX_CHILD_MESSAGE {
                    roles.push(Role::FromChild);
                    fds.push(PollFd::new(&self.channel.from_child, PollFlags::IN));
                }
                if !self.to_child.is_empty() {
                    roles.push(Role::ToChild);
                    fds.push(PollFd::new(&self.channel.to_child, PollFlags::OUT));
                }
            }
            if !referee_done {
                roles.push(Role::Event);
                fds.push(PollFd::new(&events, PollFlags::IN));
                if !self.to_referee.is_empty() {
                    roles.push(Role::ToReferee);
                    fds.push(PollFd::new(&requests, PollFlags::OUT));
                }
            }
            let wake = if referee_done {
                self.report_deadline
            } else {
                self.test_deadline.min(self.report_deadline)
            };
            // Past `wake`, nothing is ready and the loop's top sees the deadline.
            match poll_until(&mut fds, wake) {
                Ok(_) => {}
                Err(error) => {
                    self.run.referee_failure =
                        Some(RefereeFailure::Broken(PipeError::Io(error.into())));
                    continue;
                }
            }
            let ready: Vec<Role> = roles
                .iter()
                .zip(&fds)
                .filter(|(_, fd)| !fd.revents().is_empty())
                .map(|(role, _)| *role)
                .collect();
            drop(fds);
            for role in ready {
                match role {
                    Role::Report => self.take_report(),
                    Role::FromChild if !self.child_gone => self.read_child(&mut buffer),
                    Role::Event if !self.referee_done() => self.handle_event(),
                    Role::ToChild
                        if !self.child_gone
                            && self.to_child.flush(self.channel.to_child.as_fd()).is_err() =>
                    {
                        self.to_child.clear();
                    }
                    Role::ToReferee if !self.referee_done() => {
                        if let Err(error) = self.to_referee.flush(self.referee.requests()) {
                            self.run.referee_failure = Some(RefereeFailure::Broken(error));
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    fn abort(&mut self) {
        self.aborted = true;
        if self.runner.abort().is_err() {
            self.report = Some(Err(PipeError::Closed));
            self.child_gone = true;
            return;
        }
        self.report_deadline = self.report_deadline.min(Instant::now() + ABORT_GRACE);
    }

    /// The runner's report: the child is gone; a referee still waiting is told so.
    fn take_report(&mut self) {
        let report = self.runner.finish_test(self.report_deadline);
        self.child_gone = true;
        self.to_child.clear();
        if !self.referee_done() {
            self.run.child_ended_first = true;
            self.to_referee.push(Referee::ended_frame(&ending(&report)));
        }
        self.report = Some(report);
    }

    fn read_child(&mut self, buffer: &mut [u8]) {
        let Ok(read) = rustix::io::read(&self.channel.from_child, &mut *buffer) else {
            return;
        };
        self.from_child.extend(&buffer[..read]);
        // The complete messages in what arrived so far; none of them once a frame claims more
        // than the cap.
        let mut messages = Vec::new();
        loop {
            match self.from_child.take_header(MAX_CHILD_MESSAGE) {
                Ok(Some(message)) => messages.push(message),
                Ok(None) => break,
                Err(_) => {
                    self.run.protocol_violation = true;
                    self.child_gone = true;
                    self.to_child.clear();
                    self.from_child.clear();
                    self.to_referee.push(Referee::ended_frame(
                        "the solution's process sent a message over the size limit",
                    ));
                    if !self.aborted {
                        self.abort();
                    }
                    return;
                }
            }
        }
        for message in messages {
            self.to_referee.push(Referee::message_frame(&message));
        }
    }

    /// Reads one event of the referee's: a message for the child (queued, or answered with
    /// "ended" when the child is gone) or the verdict (a passing test's child is told to end).
    fn handle_event(&mut self) {
        match self.referee.next_event(self.test_deadline) {
            Ok(Event::Send(message)) => {
                if self.child_gone {
                    self.to_referee
                        .push(Referee::ended_frame("the solution's process has ended"));
                } else {
                    self.to_child.push(child_frame(&message));
                }
            }
            Ok(Event::Verdict(judgement)) => {
                if judgement.outcome == RefereeOutcome::Pass && !self.child_gone {
                    self.to_child.push(child_frame(br#"{"t":"end"}"#));
                }
                self.run.judgement = Some(judgement);
            }
            Err(PipeError::Deadline) => self.run.referee_failure = Some(RefereeFailure::Deadline),
            Err(error) => self.run.referee_failure = Some(RefereeFailure::Broken(error)),
        }
    }
}

/// What a descriptor in one poll is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Report,
    FromChild,
    ToChild,
    Event,
    ToReferee,
}
