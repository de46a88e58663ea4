// SPDX-License-Identifier: GPL-2.0
//! Everything the server opens lies below its root directory. A requested path is first
//! checked by its words (relative, no `..`, no NUL, bounded), then opened with openat2(2)
//! and `RESOLVE_BENEATH`, so the kernel refuses any symlink that leads out of the root,
//! at the moment of the open (no window between a check and the use).

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Why a path was not opened.
#[derive(Debug)]
pub enum PathError {
    /// The path tries to leave the root (`..`, a symlink out, a NUL).
    Refused(String),
    NotFound(String),
    Io(String),
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathError::Refused(s) => write!(f, "refused: {s}"),
            PathError::NotFound(s) => write!(f, "not found: {s}"),
            PathError::Io(s) => write!(f, "{s}"),
        }
    }
}

/// The requested path made relative to the root: leading slashes and `.` components
/// dropped; `..`, NUL bytes and over-long paths refused. An empty result is the root.
pub fn relative(requested: &[u8]) -> Result<PathBuf, PathError> {
    let show = String::from_utf8_lossy(requested).into_owned();
    if requested.contains(&0) {
        return Err(PathError::Refused(format!("{show}: NUL in path")));
    }
    if requested.len() > crate::wire::MAX_PATH {
        return Err(PathError::Refused(format!("{show}: path too long")));
    }
    let mut out = PathBuf::new();
    for c in Path::new(OsStr::from_bytes(requested)).components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(p) => out.push(p),
            Component::ParentDir => {
                return Err(PathError::Refused(format!("{show}: '..' is not allowed")))
            }
            Component::Prefix(_) => return Err(PathError::Refused(show)),
        }
    }
    Ok(out)
}

/// The server's root directory, held open.
pub struct Root {
    fd: OwnedFd,
    pub path: PathBuf,
}

fn cstr(p: &Path) -> Result<CString, PathError> {
    let p = if p.as_os_str().is_empty() {
        Path::new(".")
    } else {
        p
    };
    CString::new(p.as_os_str().as_bytes()).map_err(|_| PathError::Refused("NUL in path".into()))
}

fn map_err(e: io::Error, rel: &Path) -> PathError {
    let show = rel.display();
    match e.raw_os_error() {
        Some(libc::EXDEV) | Some(libc::ELOOP) => {
            PathError::Refused(format!("{show}: leads outside the served directory"))
        }
        Some(libc::ENOENT) => PathError::NotFound(format!("{show}: no such file or directory")),
        Some(libc::ENOTDIR) => PathError::NotFound(format!("{show}: not a directory")),
        _ => PathError::Io(format!("{show}: {e}")),
    }
}

impl Root {
    pub fn open(path: &Path) -> io::Result<Root> {
        let dir = File::open(path)?;
        if !dir.metadata()?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: not a directory", path.display()),
            ));
        }
        Ok(Root {
            fd: OwnedFd::from(dir),
            path: path.to_path_buf(),
        })
    }

    /// openat2(root, rel, flags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS).
    fn openat2(&self, rel: &Path, flags: i32, mode: u32) -> Result<OwnedFd, PathError> {
        let c = cstr(rel)?;
        // SAFETY: open_how is plain integers; all zero is its documented default.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = (flags | libc::O_CLOEXEC) as u64;
        how.mode = if flags & libc::O_CREAT != 0 {
            mode as u64
        } else {
            0
        };
        how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
        // EAGAIN: a rename or mount anywhere in the system while the kernel resolved a
        // `..` (a symlink's target may have one), so it could not tell whether the walk
        // stayed below the root; openat2(2) says to retry. A bounded number of times.
        let mut tries = 0;
        let fd = loop {
            // SAFETY: a valid directory fd, a NUL-terminated path and a zeroed open_how.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_openat2,
                    self.fd.as_raw_fd(),
                    c.as_ptr(),
                    &how as *const libc::open_how,
                    std::mem::size_of::<libc::open_how>(),
                )
            };
            if fd >= 0 {
                break fd;
            }
            let e = io::Error::last_os_error();
            tries += 1;
            if e.raw_os_error() != Some(libc::EAGAIN) || tries >= 64 {
                return Err(map_err(e, rel));
            }
        };
        // SAFETY: the kernel just returned this descriptor to us.
        Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
    }

    /// Opens an existing file or directory below the root for reading.
    pub fn open_read(&self, requested: &[u8]) -> Result<(File, PathBuf), PathError> {
        let rel = relative(requested)?;
        let fd = self.openat2(&rel, libc::O_RDONLY, 0)?;
        Ok((File::from(fd), rel))
    }

    /// The directory `rel` below the root, made (with its parents) if missing.
    pub fn make_dirs(&self, rel: &Path) -> Result<OwnedFd, PathError> {
        let mut cur = PathBuf::new();
        let mut fd = self.openat2(&cur, libc::O_PATH | libc::O_DIRECTORY, 0)?;
        for c in rel.components() {
            cur.push(c);
            match self.openat2(&cur, libc::O_PATH | libc::O_DIRECTORY, 0) {
                Ok(f) => fd = f,
                Err(PathError::NotFound(_)) => {
                    let name = cstr(Path::new(c.as_os_str()))?;
                    // SAFETY: a valid directory fd and a NUL-terminated name.
                    let r = unsafe { libc::mkdirat(fd.as_raw_fd(), name.as_ptr(), 0o755) };
                    if r < 0 {
                        let e = io::Error::last_os_error();
                        if e.raw_os_error() != Some(libc::EEXIST) {
                            return Err(map_err(e, &cur));
                        }
                    }
                    fd = self.openat2(&cur, libc::O_PATH | libc::O_DIRECTORY, 0)?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(fd)
    }

    /// Opens (creating its directories) `<rel>.rrxe-part` for writing; the final name
    /// must not be a symlink or a directory. Returns the file, the directory and the two
    /// names in it.
    pub fn open_part(&self, requested: &[u8], mode: u32) -> Result<PartFile, PathError> {
        let rel = relative(requested)?;
        let name = rel
            .file_name()
            .ok_or_else(|| PathError::Refused("the served directory itself is not a file".into()))?
            .to_os_string();
        let parent = rel.parent().unwrap_or(Path::new("")).to_path_buf();
        let dir = self.make_dirs(&parent)?;
        let final_rel = parent.join(&name);
        match self.openat2(&final_rel, libc::O_PATH | libc::O_NOFOLLOW, 0) {
            Ok(fd) => {
                let md = File::from(fd)
                    .metadata()
                    .map_err(|e| map_err(e, &final_rel))?;
                if !md.is_file() {
                    return Err(PathError::Refused(format!(
                        "{}: exists and is not a regular file",
                        final_rel.display()
                    )));
                }
            }
            Err(PathError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
        let mut part_name = name.clone();
        part_name.push(".rrxe-part");
        let part_rel = parent.join(&part_name);
        let fd = self.openat2(
            &part_rel,
            libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW,
            mode & 0o777,
        )?;
        Ok(PartFile {
            file: File::from(fd),
            dir,
            part: part_name,
            name,
            rel: final_rel,
        })
    }
}

/// A partial file being received, renamed to its final name once verified.
pub struct PartFile {
    pub file: File,
    dir: OwnedFd,
    part: std::ffi::OsString,
    name: std::ffi::OsString,
    pub rel: PathBuf,
}

impl PartFile {
    /// Moves `<name>.rrxe-part` to `<name>` in the same directory.
    pub fn commit(self) -> Result<(), PathError> {
        let a = cstr(Path::new(&self.part))?;
        let b = cstr(Path::new(&self.name))?;
        let d = self.dir.as_raw_fd();
        // SAFETY: a valid directory fd and NUL-terminated names.
        if unsafe { libc::renameat(d, a.as_ptr(), d, b.as_ptr()) } < 0 {
            return Err(map_err(io::Error::last_os_error(), &self.rel));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn tree() -> (PathBuf, Root) {
        let base = std::env::temp_dir().join(format!(
            "rrxe-xfer-confine-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("root/sub")).unwrap();
        fs::write(base.join("root/a.txt"), b"a").unwrap();
        fs::write(base.join("root/sub/b.txt"), b"b").unwrap();
        fs::write(base.join("secret"), b"s").unwrap();
        symlink("../secret", base.join("root/out")).unwrap();
        symlink("/etc", base.join("root/etc")).unwrap();
        symlink("sub/b.txt", base.join("root/in")).unwrap();
        symlink("../../secret", base.join("root/sub/up")).unwrap();
        let root = Root::open(&base.join("root")).unwrap();
        (base, root)
    }

    #[test]
    fn relative_paths() {
        assert_eq!(relative(b"/a/./b/").unwrap(), PathBuf::from("a/b"));
        assert_eq!(relative(b"").unwrap(), PathBuf::new());
        assert!(matches!(relative(b"a/../b"), Err(PathError::Refused(_))));
        assert!(matches!(relative(b".."), Err(PathError::Refused(_))));
        assert!(matches!(relative(b"a\0b"), Err(PathError::Refused(_))));
        assert!(matches!(
            relative(&[b'a'; 5000]),
            Err(PathError::Refused(_))
        ));
    }

    #[test]
    fn reads_stay_below_the_root() {
        let (base, root) = tree();
        assert!(root.open_read(b"a.txt").is_ok());
        assert!(root.open_read(b"/sub/b.txt").is_ok());
        assert!(
            root.open_read(b"in").is_ok(),
            "a symlink inside the root is fine"
        );
        for p in [
            &b"out"[..],
            b"etc/passwd",
            b"sub/up",
            b"../secret",
            b"sub/../../secret",
        ] {
            assert!(
                matches!(root.open_read(p), Err(PathError::Refused(_))),
                "{}",
                String::from_utf8_lossy(p)
            );
        }
        assert!(matches!(
            root.open_read(b"nope"),
            Err(PathError::NotFound(_))
        ));
        fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn writes_stay_below_the_root() {
        let (base, root) = tree();
        let p = root.open_part(b"new/dir/f", 0o644).unwrap();
        p.commit().unwrap();
        assert!(base.join("root/new/dir/f").is_file());
        assert!(matches!(
            root.open_part(b"etc/x", 0o644),
            Err(PathError::Refused(_))
        ));
        assert!(matches!(
            root.open_part(b"out", 0o644),
            Err(PathError::Refused(_))
        ));
        assert!(matches!(
            root.open_part(b"../x", 0o644),
            Err(PathError::Refused(_))
        ));
        assert!(matches!(
            root.open_part(b"sub", 0o644),
            Err(PathError::Refused(_))
        ));
        assert!(matches!(
            root.open_part(b"", 0o644),
            Err(PathError::Refused(_))
        ));
        assert!(!base.join("x").exists() && !Path::new("/etc/x.rrxe-part").exists());
        fs::remove_dir_all(base).unwrap();
    }
}
