"""Reading fixture .npz files with numpy, including float8 entries.

`load_npz(path)` is np.load of every array, except that `<f1` entries (how ml_dtypes
saves float8_e5m2; numpy cannot read that descr back) load as raw `|V1` bytes, which the
callers type by the module signature like the other <=16-bit floats. Shared by
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
