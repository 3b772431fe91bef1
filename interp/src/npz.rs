//! `.npz` archives of `.npy` arrays: read and write, every element type.
//!
//! Owns: a small `.npy` header reader/writer (format versions 1.0-3.0, C order,
//! little-endian) on top of the `zip` crate. Element types map to numpy `descr` strings;
//! `bf16` and the f8 family are stored the way `ml_dtypes` stores them — as raw void
//! fields `<V2` / `<V1` (`float8_e5m2` alone as `<f1`) — so reading those needs the expected element type (from the
//! function signature). Inputs are `arg_000`, `arg_001`, ...; outputs `out_000`, ....
//! Invariants: written archives are deterministic (stored, fixed timestamps, sorted by
//! key order given); reading never trusts header sizes beyond the bytes present.

use crate::tensor::{Data, Tensor};
use neuronc_ir::{ElemType, TensorType};
use num_complex::Complex;
use std::io::{Cursor, Read, Write};
use std::path::Path;

/// Why an archive could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum NpzError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("zip: {0}")]
    Zip(#[from] zip::result::ZipError),
    #[error("bad .npy data in `{key}`: {msg}")]
    Format { key: String, msg: String },
    #[error("key `{0}` not found")]
    Missing(String),
    #[error("`{key}`: expected {expected}, found dtype {descr} shape {shape:?}")]
    Type {
        key: String,
        expected: String,
        descr: String,
        shape: Vec<i64>,
    },
}

/// One `.npy` array: its numpy dtype string, shape and C-order elements.
#[derive(Clone, Debug)]
pub struct NpyArray {
    pub descr: String,
    pub shape: Vec<i64>,
    payload: Payload,
}

/// The elements of an [`NpyArray`]: raw bytes, or (for dtypes whose bytes are exactly a
/// storage class: f32, f64, c64, c128, i64, u64) the tensor they decode to, so that
/// [`NpyArray::to_tensor`] shares it instead of copying.
#[derive(Clone, Debug)]
enum Payload {
    Bytes(Vec<u8>),
    Decoded(Tensor),
}

impl PartialEq for NpyArray {
    fn eq(&self, other: &NpyArray) -> bool {
        self.descr == other.descr && self.shape == other.shape && self.bytes() == other.bytes()
    }
}

/// The numpy `descr` for an element type (ml_dtypes conventions for bf16/f8/int4).
pub fn descr_of(e: ElemType) -> String {
    match e {
        ElemType::I1 => "|b1".into(),
        ElemType::Int(8) => "|i1".into(),
        ElemType::UInt(8) => "|u1".into(),
        ElemType::Int(b) if b >= 16 => format!("<i{}", b / 8),
        ElemType::UInt(b) if b >= 16 => format!("<u{}", b / 8),
        ElemType::F8(neuronc_ir::F8Kind::E5M2) => "<f1".into(),
        ElemType::Int(_) | ElemType::UInt(_) | ElemType::F8(_) => "<V1".into(),
        ElemType::F16 => "<f2".into(),
        ElemType::BF16 => "<V2".into(),
        ElemType::F32 => "<f4".into(),
        ElemType::F64 => "<f8".into(),
        ElemType::Complex64 => "<c8".into(),
        ElemType::Complex128 => "<c16".into(),
    }
}

/// Whether `descr` can hold elements of type `e`.
fn descr_matches(descr: &str, e: ElemType) -> bool {
    let norm = |s: &str| s.replace(['|', '='], "<");
    norm(descr) == norm(&descr_of(e))
}

/// The element type a self-describing `descr` denotes (`None` for void types).
pub fn elem_of_descr(descr: &str) -> Option<ElemType> {
    let d = descr.trim_start_matches(['<', '|', '=']);
    Some(match d {
        "b1" => ElemType::I1,
        "i1" => ElemType::Int(8),
        "i2" => ElemType::Int(16),
        "i4" => ElemType::Int(32),
        "i8" => ElemType::Int(64),
        "u1" => ElemType::UInt(8),
        "u2" => ElemType::UInt(16),
        "u4" => ElemType::UInt(32),
        "u8" => ElemType::UInt(64),
        "f2" => ElemType::F16,
        "f4" => ElemType::F32,
        "f8" => ElemType::F64,
        "c8" => ElemType::Complex64,
        "c16" => ElemType::Complex128,
        _ => return None,
    })
}

impl NpyArray {
    /// Converts to a tensor. `expect` is required for void dtypes (bf16, f8, int4) and,
    /// when given, must match the dtype and (if `shape` is given) the shape.
    pub fn to_tensor(&self, key: &str, expect: Option<&TensorType>) -> Result<Tensor, NpzError> {
        let type_err = |exp: String| NpzError::Type {
            key: key.to_string(),
            expected: exp,
            descr: self.descr.clone(),
            shape: self.shape.clone(),
        };
        let elem = match expect {
            Some(t) if descr_matches(&self.descr, t.elem) => t.elem,
            Some(t) => return Err(type_err(format!("{} {:?}", t.elem, t.shape))),
            None => elem_of_descr(&self.descr)
                .ok_or_else(|| type_err("a self-describing dtype".into()))?,
        };
        if let Some(t) = expect {
            if *t.shape != *self.shape {
                return Err(type_err(format!("{} {:?}", t.elem, t.shape)));
            }
        }
        if let Payload::Decoded(t) = &self.payload {
            if t.elem() == elem {
                return Ok(t.clone());
            }
        }
        Tensor::from_bytes(TensorType::new(elem, &self.shape), &self.bytes()).map_err(|msg| {
            NpzError::Format {
                key: key.to_string(),
                msg,
            }
        })
    }

    /// The `.npy` array of a tensor.
    pub fn from_tensor(t: &Tensor) -> NpyArray {
        NpyArray {
            descr: descr_of(t.elem()),
            shape: t.shape().to_vec(),
            payload: Payload::Bytes(t.to_bytes()),
        }
    }

    /// The raw little-endian C-order element bytes.
    pub fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match &self.payload {
            Payload::Bytes(b) => std::borrow::Cow::Borrowed(b),
            Payload::Decoded(t) => std::borrow::Cow::Owned(t.to_bytes()),
        }
    }

    /// Serializes as a `.npy` file (format 1.0).
    pub fn to_npy(&self) -> Vec<u8> {
        let shape = match self.shape.len() {
            0 => "()".to_string(),
            1 => format!("({},)", self.shape[0]),
            _ => format!(
                "({})",
                self.shape
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
            self.descr, shape
        );
        let total = 10 + header.len() + 1;
        header.push_str(&" ".repeat((64 - total % 64) % 64));
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((header.len() as u16).to_le_bytes());
        out.extend(header.as_bytes());
        out.extend(self.bytes().iter());
        out
    }

    /// Parses a `.npy` file.
    pub fn from_npy(key: &str, b: &[u8]) -> Result<NpyArray, NpzError> {
        NpyArray::read_npy(key, &mut Cursor::new(b), b.len(), b.len())
    }

    /// Reads a `.npy` file of `size` bytes from `r`: the header, then the data straight
    /// into its final buffer (one copy). At most `cap` bytes are reserved up front, so a
    /// lying `size` cannot make it allocate more than the data that arrives.
    fn read_npy(
        key: &str,
        r: &mut impl Read,
        size: usize,
        cap: usize,
    ) -> Result<NpyArray, NpzError> {
        let fmt = |msg: &str| NpzError::Format {
            key: key.to_string(),
            msg: msg.to_string(),
        };
        let mut pre = [0u8; 10];
        r.read_exact(&mut pre).map_err(|_| fmt("missing magic"))?;
        if &pre[..6] != b"\x93NUMPY" {
            return Err(fmt("missing magic"));
        }
        let (hlen, start) = if pre[6] == 1 {
            (u16::from_le_bytes([pre[8], pre[9]]) as usize, 10)
        } else {
            let mut ext = [0u8; 2];
            r.read_exact(&mut ext)
                .map_err(|_| fmt("truncated header"))?;
            (
                u32::from_le_bytes([pre[8], pre[9], ext[0], ext[1]]) as usize,
                12,
            )
        };
        if start + hlen > size {
            return Err(fmt("truncated header"));
        }
        let mut header = vec![0u8; hlen];
        r.read_exact(&mut header)
            .map_err(|_| fmt("truncated header"))?;
        let header = std::str::from_utf8(&header).map_err(|_| fmt("header is not text"))?;
        let descr = dict_value(header, "descr").ok_or_else(|| fmt("no descr"))?;
        let descr = descr.trim_matches(['\'', '"']).to_string();
        if descr.starts_with('>') {
            return Err(fmt("big-endian arrays are not supported"));
        }
        if dict_value(header, "fortran_order").is_some_and(|v| v.starts_with("True")) {
            return Err(fmt("Fortran-order arrays are not supported"));
        }
        let shape_s = dict_value(header, "shape").ok_or_else(|| fmt("no shape"))?;
        let shape = shape_s
            .trim_matches(['(', ')'])
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<i64>().map_err(|_| fmt("bad shape")))
            .collect::<Result<Vec<_>, _>>()?;
        let n = size - start - hlen;
        let payload = match direct_elem(&descr, &shape, n) {
            Some(elem) => {
                let data = read_decoded(r, elem, n, cap).map_err(|_| fmt("truncated data"))?;
                Payload::Decoded(Tensor::from_parts(TensorType::new(elem, &shape), data))
            }
            None => {
                let mut data = Vec::with_capacity(n.min(cap));
                r.take(n as u64).read_to_end(&mut data)?;
                if data.len() != n {
                    return Err(fmt("truncated data"));
                }
                Payload::Bytes(data)
            }
        };
        Ok(NpyArray {
            descr,
            shape,
            payload,
        })
    }
}

/// The element type whose storage class holds `descr`'s bytes as they are, if the data
/// (`n` bytes) has exactly the size `shape` says.
fn direct_elem(descr: &str, shape: &[i64], n: usize) -> Option<ElemType> {
    let elem = elem_of_descr(descr)?;
    let direct = matches!(
        elem,
        ElemType::F32
            | ElemType::F64
            | ElemType::Complex64
            | ElemType::Complex128
            | ElemType::Int(64)
            | ElemType::UInt(64)
    );
    let count = shape.iter().try_fold(1usize, |a, &d| {
        usize::try_from(d).ok().and_then(|d| a.checked_mul(d))
    })?;
    (direct && count.checked_mul(elem.byte_width()) == Some(n)).then_some(elem)
}

/// Reads `n` bytes of `elem` elements from `r` into their storage class, through a small
/// buffer (no second full-size copy). Reserves at most `cap` bytes before data arrives.
fn read_decoded(r: &mut impl Read, elem: ElemType, n: usize, cap: usize) -> std::io::Result<Data> {
    fn read<T, const W: usize>(
        r: &mut impl Read,
        n: usize,
        cap: usize,
        f: impl Fn([u8; W]) -> T,
    ) -> std::io::Result<Vec<T>> {
        // A multiple of every width, so chunks never split an element.
        const CHUNK: usize = 1 << 16;
        let mut out = Vec::with_capacity(n.min(cap) / W);
        let mut buf = vec![0u8; CHUNK.min(n)];
        let mut left = n;
        while left > 0 {
            let k = left.min(CHUNK);
            r.read_exact(&mut buf[..k])?;
            out.extend(buf[..k].chunks_exact(W).map(|c| {
                let mut a = [0u8; W];
                a.copy_from_slice(c);
                f(a)
            }));
            left -= k;
        }
        Ok(out)
    }
    let c64 = |b: [u8; 8]| {
        let [a0, a1, a2, a3, b0, b1, b2, b3] = b;
        Complex::new(
            f32::from_le_bytes([a0, a1, a2, a3]),
            f32::from_le_bytes([b0, b1, b2, b3]),
        )
    };
    let c128 = |b: [u8; 16]| {
        let (re, im) = b.split_at(8);
        let w = |s: &[u8]| {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            f64::from_le_bytes(a)
        };
        Complex::new(w(re), w(im))
    };
    Ok(match elem {
        ElemType::F32 => Data::F32(read(r, n, cap, f32::from_le_bytes)?),
        ElemType::F64 => Data::F64(read(r, n, cap, f64::from_le_bytes)?),
        ElemType::Complex64 => Data::C64(read(r, n, cap, c64)?),
        ElemType::Complex128 => Data::C128(read(r, n, cap, c128)?),
        _ => Data::Int(read(r, n, cap, i64::from_le_bytes)?),
    })
}

/// The raw text of `'key': value` in a numpy header dict (value up to `,` or `)`).
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("'{key}':");
    let i = header.find(&pat)? + pat.len();
    let rest = header[i..].trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else {
        rest.find([',', '}'])?
    };
    Some(rest[..end].trim())
}

/// Reads every array of an `.npz` archive from bytes, keyed without the `.npy` suffix.
pub fn read_npz_bytes(bytes: &[u8]) -> Result<Vec<(String, NpyArray)>, NpzError> {
    read_archive(Cursor::new(bytes), bytes.len())
}

/// Reads an `.npz` file (streamed: each array's data is copied once, from the file into
/// its buffer).
pub fn read_npz(path: &Path) -> Result<Vec<(String, NpyArray)>, NpzError> {
    let f = std::fs::File::open(path)?;
    let len = usize::try_from(f.metadata()?.len()).unwrap_or(usize::MAX);
    read_archive(std::io::BufReader::new(f), len)
}

/// Deflate expands at most about 1032-fold; stored entries not at all.
const MAX_INFLATE: usize = 1032;

fn read_archive(
    r: impl Read + std::io::Seek,
    len: usize,
) -> Result<Vec<(String, NpyArray)>, NpzError> {
    let mut z = zip::ZipArchive::new(r)?;
    let mut out = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i)?;
        let name = f.name().trim_end_matches(".npy").to_string();
        let size = usize::try_from(f.size()).map_err(|_| NpzError::Format {
            key: name.clone(),
            msg: "entry too large".into(),
        })?;
        let cap = match f.compression() {
            zip::CompressionMethod::Stored => len,
            _ => len.saturating_mul(MAX_INFLATE),
        };
        let arr = NpyArray::read_npy(&name, &mut f, size, cap)?;
        // Reading to the end lets the archive check the entry's CRC.
        if f.read(&mut [0u8; 1])? != 0 {
            return Err(NpzError::Format {
                key: name,
                msg: "entry longer than its recorded size".into(),
            });
        }
        out.push((name, arr));
    }
    Ok(out)
}

/// Writes named tensors as an uncompressed `.npz` archive (like `np.savez`).
pub fn write_npz_bytes(items: &[(String, &Tensor)]) -> Result<Vec<u8>, NpzError> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .last_modified_time(zip::DateTime::default())
        .large_file(true);
    for (name, t) in items {
        w.start_file(format!("{name}.npy"), opts)?;
        w.write_all(&NpyArray::from_tensor(t).to_npy())?;
    }
    Ok(w.finish()?.into_inner())
}

/// Writes an `.npz` file.
pub fn write_npz(path: &Path, items: &[(String, &Tensor)]) -> Result<(), NpzError> {
    std::fs::write(path, write_npz_bytes(items)?)?;
    Ok(())
}

/// `arg_000`-style key.
pub fn arg_key(i: usize) -> String {
    format!("arg_{i:03}")
}

/// `out_000`-style key.
pub fn out_key(i: usize) -> String {
    format!("out_{i:03}")
}

/// Looks up `key` and converts it to a tensor of type `ty`.
pub fn take(arrays: &[(String, NpyArray)], key: &str, ty: &TensorType) -> Result<Tensor, NpzError> {
    let (_, a) = arrays
        .iter()
        .find(|(k, _)| k == key)
        .ok_or_else(|| NpzError::Missing(key.to_string()))?;
    a.to_tensor(key, Some(ty))
}

/// Loads `arg_000..` for the given argument types.
pub fn load_args(
    arrays: &[(String, NpyArray)],
    types: &[TensorType],
) -> Result<Vec<Tensor>, NpzError> {
    types
        .iter()
        .enumerate()
        .map(|(i, t)| take(arrays, &arg_key(i), t))
        .collect()
}

/// Writes tensors as `out_000..`.
pub fn save_outputs(path: &Path, outs: &[Tensor]) -> Result<(), NpzError> {
    let items: Vec<(String, &Tensor)> = outs
        .iter()
        .enumerate()
        .map(|(i, t)| (out_key(i), t))
        .collect();
    write_npz(path, &items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout_matches_numpy() {
        let t = Tensor::from_f32(&[2], &[1.0, 2.0]).unwrap();
        let npy = NpyArray::from_tensor(&t).to_npy();
        // numpy writes a 128-byte preamble for this header (118-byte dict, 10-byte prefix).
        assert_eq!(npy.len(), 128 + 8);
        assert_eq!(&npy[8..10], &[118, 0]);
        assert!(std::str::from_utf8(&npy[10..74])
            .unwrap()
            .starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"));
    }

    #[test]
    fn round_trip_all_classes() {
        let ts = [
            Tensor::from_f64_as(ElemType::BF16, &[2, 1], &[1.5, -3.0]).unwrap(),
            Tensor::from_f64_as(
                ElemType::F8(neuronc_ir::F8Kind::E4M3FN),
                &[3],
                &[0.5, 448.0, -2.0],
            )
            .unwrap(),
            Tensor::from_i64(ElemType::UInt(64), &[1], &[-1]).unwrap(),
            Tensor::from_bool(&[], &[true]).unwrap(),
            Tensor::from_f32(&[2, 2], &[1.5, -0.0, f32::INFINITY, 3e-39]).unwrap(),
            Tensor::from_f64(&[1], &[-2.25]).unwrap(),
            Tensor::new(
                TensorType::new(ElemType::Complex64, &[2]),
                Data::C64(vec![Complex::new(1.0, -2.0), Complex::new(0.5, 4.0)]),
            )
            .unwrap(),
        ];
        let items: Vec<(String, &Tensor)> = ts
            .iter()
            .enumerate()
            .map(|(i, t)| (out_key(i), t))
            .collect();
        let bytes = write_npz_bytes(&items).unwrap();
        let back = read_npz_bytes(&bytes).unwrap();
        for (i, t) in ts.iter().enumerate() {
            assert_eq!(back[i].0, out_key(i));
            assert_eq!(&back[i].1.to_tensor("k", Some(t.ty())).unwrap(), t);
        }
        assert_eq!(back[0].1.descr, "<V2");
        assert_eq!(back[4].1, NpyArray::from_tensor(&ts[4]));
    }

    #[test]
    fn truncated_archives_are_errors() {
        let t = Tensor::from_f32(&[64], &[0.25; 64]).unwrap();
        let bytes = write_npz_bytes(&[("a".to_string(), &t)]).unwrap();
        let npy = NpyArray::from_tensor(&t).to_npy();
        let short = NpyArray::from_npy("a", &npy[..npy.len() - 4]).unwrap();
        assert!(short.to_tensor("a", Some(t.ty())).is_err());
        assert!(NpyArray::from_npy("a", &npy[..20]).is_err());
        assert!(read_npz_bytes(&bytes[..bytes.len() / 2]).is_err());
    }
}
