"""``python -m tests.hostile.keyring_host COMMAND...``: run COMMAND (the engine) in a new session
keyring holding the host's token (:data:`tests.hostile.kernel.HOST_KEY`), as a login's or a
service's session keyring holds a user's keys."""

from __future__ import annotations

import ctypes
import os
import sys

from tests.hostile.kernel import HOST_KEY, _syscall

if __name__ == "__main__":
    if _syscall(250, 1, ctypes.c_void_p(None)) < 0:  # KEYCTL_JOIN_SESSION_KEYRING, anonymous
        raise SystemExit(f"keyring_host: no new session keyring: errno {ctypes.get_errno()}")
    payload = b"my-api-token"
    if _syscall(248, ctypes.c_char_p(b"user"), ctypes.c_char_p(HOST_KEY.encode()),
                ctypes.c_char_p(payload), len(payload), -3) < 0:
        raise SystemExit(f"keyring_host: add_key failed: errno {ctypes.get_errno()}")
    os.execv(sys.argv[1], sys.argv[1:])
