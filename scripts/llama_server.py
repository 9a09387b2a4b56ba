"""Start llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) with
llama.cpp's extra weight buffers (AMX/AVX-512 repacking) turned off unless
``--extra-buffers`` is given: on this project's CI machine the repacked AMX path crashes the
process (SIGSEGV in the first ``llama_decode``) and llama-cpp-python's server has no option for
it. Every other argument is the server's own (``--model``, ``--chat_format``, ``--port``...).

Run by ``scripts/real_model.py`` with the interpreter of the environment the server is
installed in.
"""

from __future__ import annotations

import sys


def main() -> None:
    extra = "--extra-buffers" in sys.argv
    sys.argv = [arg for arg in sys.argv if arg != "--extra-buffers"]
    if not extra:
        import llama_cpp
        import llama_cpp.llama

        default = llama_cpp.llama_model_default_params

        def without_extra_buffers():  # type: ignore[no-untyped-def]
            params = default()
            params.use_extra_bufts = False
            return params

        llama_cpp.llama_model_default_params = without_extra_buffers
        llama_cpp.llama.llama_cpp.llama_model_default_params = without_extra_buffers
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
