//! `.npz` archives of `.npy` arrays: read and write, every element type.
//!
//! Owns: a small `.npy` header reader/writer (format versions 1.0-3.0, C order,
//! little-endian) on top of the `zip` crate. Element types map to numpy `descr` strings;
//! `bf16` and the f8 family are stored the way `ml_dtypes` stores them — as raw void
//! fields `<V2` / `<V1` (`float8_e5m2` alone as `<f1`) — so reading those needs the expected element type (from the
//! function signature). Inputs are `arg_000`, `arg_001`, ...; outputs `out_000`, ....
//! Invariants: written archives are deterministic (stored, fixed timestamps, sorted by
//! key order given); reading never trusts header sizes beyond the bytes present.

use crate::tensor::Tensor;
use neuronc_ir::{ElemType, TensorType};
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

/// One `.npy` array: its numpy dtype string, shape and raw C-order bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    pub descr: String,
    pub shape: Vec<i64>,
    pub data: Vec<u8>,
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
        Tensor::from_bytes(TensorType::new(elem, &self.shape), &self.data).map_err(|msg| {
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
            data: t.to_bytes(),
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
        out.extend(&self.data);
        out
    }

    /// Parses a `.npy` file.
    pub fn from_npy(key: &str, b: &[u8]) -> Result<NpyArray, NpzError> {
        let fmt = |msg: &str| NpzError::Format {
            key: key.to_string(),
            msg: msg.to_string(),
        };
        if b.len() < 10 || &b[..6] != b"\x93NUMPY" {
            return Err(fmt("missing magic"));
        }
        let (hlen, start) = if b[6] == 1 {
            (u16::from_le_bytes([b[8], b[9]]) as usize, 10)
        } else {
            if b.len() < 12 {
                return Err(fmt("truncated header"));
            }
            (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12)
        };
        let header = b
            .get(start..start + hlen)
            .ok_or_else(|| fmt("truncated header"))?;
        let header = std::str::from_utf8(header).map_err(|_| fmt("header is not text"))?;
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
        Ok(NpyArray {
            descr,
            shape,
            data: b[start + hlen..].to_vec(),
        })
    }
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
    let mut z = zip::ZipArchive::new(Cursor::new(bytes))?;
    let mut out = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i)?;
        let name = f.name().trim_end_matches(".npy").to_string();
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)?;
        out.push((name.clone(), NpyArray::from_npy(&name, &buf)?));
    }
    Ok(out)
}

/// Reads an `.npz` file.
pub fn read_npz(path: &Path) -> Result<Vec<(String, NpyArray)>, NpzError> {
    read_npz_bytes(&std::fs::read(path)?)
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
    }
}
