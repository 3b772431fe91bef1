"""Reading fixture .npz files with numpy, including float8 entries.

`load_npz(path)` is np.load of every array, except that `<f1` entries (how ml_dtypes
saves float8_e5m2; numpy cannot read that descr back) load as raw `|V1` bytes, which the
callers type by the module signature like the other <=16-bit floats. `numbered(z, "arg_")`
is the keys `arg_000, arg_001, ...` in index order (not string order: `arg_1000` sorts before
`arg_101` as a string, and traces with more than 1000 arguments or results exist). Shared by
check_trace.py and run_hlo_proto.py.
"""
import io
import zipfile

import numpy as np


class Npz:
    """The arrays of an .npz by key (`files`, `z[key]`), like np.load's result."""

    def __init__(self, arrays):
        self.arrays = arrays
        self.files = list(arrays)

    def __getitem__(self, key):
        return self.arrays[key]


def numbered(z, prefix):
    """The keys of `z` (an Npz, np.load result or key list) named `prefix` + an integer, ordered
    by that integer."""
    files = z.files if hasattr(z, "files") else list(z)
    keys = [k for k in files if k.startswith(prefix) and k[len(prefix):].isdigit()]
    return sorted(keys, key=lambda k: int(k[len(prefix):]))


def load_npz(path):
    """np.load of every array, except that `<f1` entries (how ml_dtypes saves
    float8_e5m2; numpy cannot read that descr back) load as raw `|V1` bytes, typed later
    by the module signature like the other <=16-bit floats."""
    arrays = {}
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            data = z.read(name)
            head = data[:128].replace(b"'descr': '<f1'", b"'descr': '|V1'", 1)
            key = name[:-4] if name.endswith(".npy") else name
            arrays[key] = np.load(io.BytesIO(head + data[128:]))
    return Npz(arrays)
