//! Where the cgroup hierarchies are: the cgroup mounts in `/proc/self/mountinfo` and our own
//! cgroup in each hierarchy from `/proc/self/cgroup`.

use std::path::{Path, PathBuf};

use super::read_text;

/// A cgroup mount from /proc/self/mountinfo.
pub(super) struct CgroupMount {
    pub(super) root: String,
    pub(super) mount_point: PathBuf,
    pub(super) unified: bool,
    pub(super) controllers: Vec<String>,
}

/// One line of /proc/self/cgroup: `(hierarchy controllers, path)`; the unified hierarchy's
/// controllers are one empty name.
pub(super) type Membership = (Vec<String>, String);

pub(super) fn cgroup_mounts() -> Vec<CgroupMount> {
    let Ok(text) = read_text(Path::new("/proc/self/mountinfo")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fields: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            let filesystem = *right.first()?;
            if filesystem != "cgroup" && filesystem != "cgroup2" {
                return None;
            }
            let options = right.get(2).copied().unwrap_or("");
            Some(CgroupMount {
                root: fields.get(3)?.to_string(),
                mount_point: PathBuf::from(fields.get(4)?.replace("\\040", " ")),
                unified: filesystem == "cgroup2",
                controllers: options.split(',').map(str::to_owned).collect(),
            })
        })
        .collect()
}

/// Our own cgroups, one per hierarchy, from /proc/self/cgroup.
pub(super) fn own_cgroups() -> Vec<Membership> {
    let Ok(text) = read_text(Path::new("/proc/self/cgroup")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let _id = parts.next()?;
            let controllers = parts.next()?.split(',').map(str::to_owned).collect();
            Some((controllers, parts.next()?.to_owned()))
        })
        .collect()
}

/// The directory of cgroup `path` (as /proc/self/cgroup names it) under `mount`.
pub(super) fn join_mount(mount: &CgroupMount, path: &str) -> PathBuf {
    let relative = path.strip_prefix(mount.root.as_str()).unwrap_or(path);
    mount.mount_point.join(relative.trim_start_matches('/'))
}
