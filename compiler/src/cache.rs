//! The compile cache: artifact sets stored on disk under a [`Key`] derived from everything
//! a compile depends on.
//!
//! Owns [`Key`] (a BLAKE3 hash of the canonical printed IR, the target, the flags and a
//! compiler identity), [`Cache`] (a directory of entries with lookup, atomic store, and
//! size-bounded eviction) and [`CacheError`].
//!
//! Layout: `<dir>/v1/<first two hex digits of the key>/<key>.entry`, one file per entry,
//! plus `<dir>/v1/tmp/` for entries being written. An entry is
//! `MAGIC`, a little-endian `u32` header length, a JSON [`Header`] (the key, each file's
//! name and length, the BLAKE3 hash of the payload), then the files' bytes back to back.
//!
//! Invariants:
//! * an entry is written to a temporary file in `v1/tmp/` and renamed into place, so a
//!   reader sees either no entry or a whole one; concurrent writers of one key write the
//!   same bytes and the last rename wins;
//! * every lookup checks the magic, the key, the lengths and the payload hash; anything
//!   that does not check out (truncation, bit rot, a file from another version) is
//!   [`Lookup::Corrupt`], which callers treat as a miss, never as output;
//! * the cache never prints; the last-use time of an entry is its file's mtime, which
//!   [`Cache::evict`] uses to drop the least recently used entries beyond the size limit.

use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// First bytes of every entry; the last byte is the format version.
const MAGIC: &[u8; 16] = b"neuronc-rs-cach\x01";
/// Subdirectory for this entry format; a new format gets a new directory.
const FORMAT_DIR: &str = "v1";
/// Temporary files older than this are left over from a crash and may be deleted.
const STALE_TMP: Duration = Duration::from_secs(3600);
/// Default size limit of a cache directory.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// What can go wrong reading or writing the cache. Lookups of damaged entries are not
/// errors (see [`Lookup::Corrupt`]); these are failures of the file system itself.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// An artifact name that is not a plain file name (it would escape the directory).
    #[error("artifact name {0:?} is not a plain file name")]
    BadName(String),
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> CacheError {
    let path = path.to_path_buf();
    move |source| CacheError::Io {
        action,
        path,
        source,
    }
}

/// A cache key: BLAKE3 over length-prefixed fields, so no two field lists collide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key([u8; 32]);

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&blake3::Hash::from(self.0).to_hex())
    }
}

/// Everything a compile's output depends on.
#[derive(Clone, Copy, Debug)]
pub struct KeyInputs<'a> {
    /// The verified module printed canonically (with locations, so metadata that may
    /// carry them can never be served stale).
    pub ir: &'a str,
    pub target: &'a str,
    /// Every other option that changes the artifacts, as `(name, value)`.
    pub flags: &'a [(&'a str, &'a str)],
    /// Identifies the compiler build (see [`compiler_id`]).
    pub compiler: &'a str,
}

impl Key {
    pub fn new(inputs: &KeyInputs<'_>) -> Key {
        let mut h = blake3::Hasher::new();
        let mut field = |bytes: &[u8]| {
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(MAGIC);
        field(inputs.compiler.as_bytes());
        field(inputs.target.as_bytes());
        for (name, value) in inputs.flags {
            field(name.as_bytes());
            field(value.as_bytes());
        }
        field(inputs.ir.as_bytes());
        Key(*h.finalize().as_bytes())
    }
}

/// The identity of a compiler build: the package version and the BLAKE3 hash of the
/// executable `exe`. Every rebuild changes it, so a development build never reuses the
/// artifacts of another build with the same version number.
pub fn compiler_id_of(exe: &Path) -> Result<String, CacheError> {
    let mut h = blake3::Hasher::new();
    // Memory-mapped and hashed on all cores: this runs once per invocation.
    h.update_mmap_rayon(exe).map_err(io_err("read", exe))?;
    Ok(format!(
        "neuronc-rs {} exe {}",
        env!("CARGO_PKG_VERSION"),
        h.finalize().to_hex()
    ))
}

/// [`compiler_id_of`] the running executable, computed once per process.
pub fn compiler_id() -> Result<String, CacheError> {
    static ID: OnceLock<String> = OnceLock::new();
    if let Some(id) = ID.get() {
        return Ok(id.clone());
    }
    let exe = std::env::current_exe().map_err(io_err("locate", Path::new("the executable")))?;
    let id = compiler_id_of(&exe)?;
    Ok(ID.get_or_init(|| id).clone())
}

/// The default cache directory: `$NEURONC_CACHE_DIR`, else `$XDG_CACHE_HOME/neuronc-rs`,
/// else `$HOME/.cache/neuronc-rs`; `None` when none is set (relative values of the XDG
/// and HOME variables are ignored, as the XDG spec asks).
pub fn default_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("NEURONC_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(xdg) = absolute("XDG_CACHE_HOME") {
        return Some(xdg.join("neuronc-rs"));
    }
    absolute("HOME").map(|home| home.join(".cache").join("neuronc-rs"))
}

/// The JSON header of an entry.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    key: String,
    /// `(name, length)` of each file, in payload order.
    files: Vec<(String, u64)>,
    payload_blake3: String,
}

/// The result of [`Cache::get`].
#[derive(Debug)]
pub enum Lookup {
    /// The stored files, in the order they were stored.
    Hit(Vec<(String, Vec<u8>)>),
    Miss,
    /// An entry exists but does not check out (the reason says why); it was removed.
    Corrupt(String),
}

/// What [`Cache::evict`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Evicted {
    pub entries: usize,
    pub bytes: u64,
    /// Size of the entries that remain.
    pub kept_bytes: u64,
}

/// A cache directory. Cheap to create: nothing is touched until the first lookup or store.
#[derive(Clone, Debug)]
pub struct Cache {
    root: PathBuf,
    max_bytes: u64,
}

impl Cache {
    /// A cache in `dir` that [`Cache::evict`] keeps under `max_bytes`.
    pub fn new(dir: &Path, max_bytes: u64) -> Cache {
        Cache {
            root: dir.join(FORMAT_DIR),
            max_bytes,
        }
    }

    fn entry_path(&self, key: &Key) -> PathBuf {
        let hex = key.to_string();
        self.root.join(&hex[..2]).join(format!("{hex}.entry"))
    }

    /// Looks `key` up. A damaged entry is removed (best effort) and reported as
    /// [`Lookup::Corrupt`]; a hit marks the entry as recently used.
    pub fn get(&self, key: &Key) -> Result<Lookup, CacheError> {
        let path = self.entry_path(key);
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Lookup::Miss),
            Err(e) => return Err(io_err("read", &path)(e)),
        };
        match decode(&bytes, key) {
            Ok(files) => {
                touch(&path);
                Ok(Lookup::Hit(files))
            }
            Err(reason) => {
                let _ = fs::remove_file(&path);
                Ok(Lookup::Corrupt(reason))
            }
        }
    }

    /// Stores `files` under `key`, atomically replacing any entry already there.
    pub fn put(&self, key: &Key, files: &[(&str, &[u8])]) -> Result<(), CacheError> {
        if let Some((bad, _)) = files.iter().find(|(n, _)| !is_plain_name(n)) {
            return Err(CacheError::BadName((*bad).to_string()));
        }
        let path = self.entry_path(key);
        let tmp_dir = self.root.join("tmp");
        fs::create_dir_all(&tmp_dir).map_err(io_err("create", &tmp_dir))?;
        let parent = path.parent().unwrap_or(&self.root);
        fs::create_dir_all(parent).map_err(io_err("create", parent))?;
        let mut tmp = tempfile::NamedTempFile::new_in(&tmp_dir)
            .map_err(io_err("create a file in", &tmp_dir))?;
        tmp.write_all(&encode(key, files))
            .map_err(io_err("write", tmp.path()))?;
        tmp.persist(&path)
            .map_err(|e| io_err("rename into", &path)(e.error))?;
        Ok(())
    }

    /// Deletes the least recently used entries until the rest fit in the size limit, and
    /// temporary files left over from crashed writers.
    pub fn evict(&self) -> Result<Evicted, CacheError> {
        let mut entries = self.entries(true)?;
        entries.sort();
        let mut total: u64 = entries.iter().map(|(_, _, len)| len).sum();
        let mut evicted = Evicted::default();
        for (_, path, len) in entries {
            if total <= self.max_bytes {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total -= len;
                evicted.entries += 1;
                evicted.bytes += len;
            }
        }
        evicted.kept_bytes = total;
        Ok(evicted)
    }

    /// How many entries the cache holds and their total size in bytes.
    pub fn usage(&self) -> Result<(usize, u64), CacheError> {
        let entries = self.entries(false)?;
        Ok((entries.len(), entries.iter().map(|(_, _, len)| len).sum()))
    }

    /// The directory holding the entries.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The size limit.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Every entry as (last use, path, size); `tidy` also deletes stale temporary files.
    fn entries(&self, tidy: bool) -> Result<Vec<(SystemTime, PathBuf, u64)>, CacheError> {
        let mut entries = Vec::new();
        for shard in read_dir(&self.root)? {
            if shard.file_name().is_some_and(|n| n == "tmp") {
                if tidy {
                    remove_stale_tmp(&shard);
                }
                continue;
            }
            entries.extend(
                read_dir(&shard)?
                    .into_iter()
                    .filter(|p| p.extension().is_some_and(|e| e == "entry"))
                    .filter_map(|p| {
                        let meta = fs::metadata(&p).ok()?;
                        let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                        Some((used, p, meta.len()))
                    }),
            );
        }
        Ok(entries)
    }

    /// Removes every entry (and the directory of this format).
    pub fn clear(&self) -> Result<(), CacheError> {
        match fs::remove_dir_all(&self.root) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_err("remove", &self.root)(e)),
            _ => Ok(()),
        }
    }
}

/// The paths in `dir` (none if it does not exist), sorted for determinism.
fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, CacheError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("list", dir)(e)),
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    Ok(paths)
}

fn remove_stale_tmp(dir: &Path) {
    let now = SystemTime::now();
    for path in read_dir(dir).unwrap_or_default() {
        let old = fs::metadata(&path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).unwrap_or_default() > STALE_TMP);
        if old {
            let _ = fs::remove_file(&path);
        }
    }
}

/// Marks an entry as used now (best effort: a read-only cache still serves hits).
fn touch(path: &Path) {
    if let Ok(f) = fs::File::options().append(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
}

fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

fn encode(key: &Key, files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut payload = blake3::Hasher::new();
    for (_, bytes) in files {
        payload.update(bytes);
    }
    let header = Header {
        key: key.to_string(),
        files: files
            .iter()
            .map(|(n, b)| ((*n).to_string(), b.len() as u64))
            .collect(),
        payload_blake3: payload.finalize().to_hex().to_string(),
    };
    // Serializing a struct of strings and integers cannot fail.
    let header = serde_json::to_vec(&header).unwrap_or_default();
    let body: usize = files.iter().map(|(_, b)| b.len()).sum();
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + header.len() + body);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(&header);
    for (_, bytes) in files {
        out.extend_from_slice(bytes);
    }
    out
}

/// Decodes and checks an entry; `Err` says why it does not check out.
fn decode(bytes: &[u8], key: &Key) -> Result<Vec<(String, Vec<u8>)>, String> {
    let rest = bytes
        .strip_prefix(MAGIC.as_slice())
        .ok_or("bad magic (another format version?)")?;
    let (len, rest) = rest.split_first_chunk::<4>().ok_or("truncated header")?;
    let len = u32::from_le_bytes(*len) as usize;
    if rest.len() < len {
        return Err("truncated header".into());
    }
    let (header, mut payload) = rest.split_at(len);
    let header: Header =
        serde_json::from_slice(header).map_err(|e| format!("unreadable header: {e}"))?;
    if header.key != key.to_string() {
        return Err("entry is for another key".into());
    }
    let expected = header
        .files
        .iter()
        .try_fold(0u64, |sum, (_, n)| sum.checked_add(*n));
    if expected != Some(payload.len() as u64) {
        return Err(format!(
            "payload is {} bytes, the header says otherwise",
            payload.len()
        ));
    }
    if blake3::hash(payload).to_hex().as_str() != header.payload_blake3 {
        return Err("payload hash mismatch".into());
    }
    let mut files = Vec::with_capacity(header.files.len());
    for (name, n) in header.files {
        if !is_plain_name(&name) {
            return Err(format!("bad file name {name:?}"));
        }
        let (data, rest) = payload.split_at(n as usize);
        files.push((name, data.to_vec()));
        payload = rest;
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(ir: &str) -> Key {
        Key::new(&KeyInputs {
            ir,
            target: "trn1",
            flags: &[("auto_cast", "matmult")],
            compiler: "test",
        })
    }

    #[test]
    fn fields_are_length_prefixed() {
        let a = Key::new(&KeyInputs {
            ir: "x",
            target: "trn1",
            flags: &[("ab", "c")],
            compiler: "t",
        });
        let b = Key::new(&KeyInputs {
            ir: "x",
            target: "trn1",
            flags: &[("a", "bc")],
            compiler: "t",
        });
        assert_ne!(a, b);
    }

    #[test]
    fn store_lookup_and_damage() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(dir.path(), DEFAULT_MAX_BYTES);
        let k = key("module");
        assert!(matches!(cache.get(&k), Ok(Lookup::Miss)));
        cache
            .put(&k, &[("a.txt", b"hello"), ("b.bin", &[0, 1, 2])])
            .expect("put");
        match cache.get(&k) {
            Ok(Lookup::Hit(files)) => assert_eq!(
                files,
                vec![
                    ("a.txt".into(), b"hello".to_vec()),
                    ("b.bin".into(), vec![0, 1, 2])
                ]
            ),
            other => panic!("expected a hit, got {other:?}"),
        }
        let path = cache.entry_path(&k);
        let mut bytes = fs::read(&path).expect("entry");
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        fs::write(&path, &bytes).expect("write");
        assert!(matches!(cache.get(&k), Ok(Lookup::Corrupt(_))));
        assert!(!path.exists(), "a corrupt entry is removed");
        assert!(matches!(cache.get(&k), Ok(Lookup::Miss)));
    }

    #[test]
    fn rejects_names_that_escape() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(dir.path(), DEFAULT_MAX_BYTES);
        let err = cache.put(&key("m"), &[("../x", b"")]);
        assert!(matches!(err, Err(CacheError::BadName(_))));
    }

    #[test]
    fn eviction_keeps_the_most_recently_used() {
        let dir = tempfile::tempdir().expect("tempdir");
        let big = vec![7u8; 1000];
        let cache = Cache::new(dir.path(), 2500);
        let keys: Vec<Key> = (0..3).map(|i| key(&i.to_string())).collect();
        let t0 = SystemTime::now() - Duration::from_secs(100);
        for (i, k) in keys.iter().enumerate() {
            cache.put(k, &[("f", &big)]).expect("put");
            let f = fs::File::options()
                .append(true)
                .open(cache.entry_path(k))
                .expect("open");
            f.set_modified(t0 + Duration::from_secs(i as u64))
                .expect("mtime");
        }
        // Using the oldest entry makes the second-oldest the one to go.
        assert!(matches!(cache.get(&keys[0]), Ok(Lookup::Hit(_))));
        let ev = cache.evict().expect("evict");
        assert_eq!(ev.entries, 1);
        assert!(cache.entry_path(&keys[0]).exists());
        assert!(!cache.entry_path(&keys[1]).exists());
        assert!(cache.entry_path(&keys[2]).exists());
    }
}
