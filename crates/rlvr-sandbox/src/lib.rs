//! Run one untrusted program isolated: new namespaces, a minimal read-only root, cgroup limits,
//! rlimits, an unprivileged user, seccomp installed last, and nothing left running afterwards.
