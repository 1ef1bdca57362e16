"""The Larvatus job: options, Parquet schemas, the Beam graph and its entry points; `Redactor` for use in-process."""

from larvatus.models import beam_imports  # noqa: F401,E402  (before any apache_beam.ml import)
from larvatus.logs import install_noise_filter

# Beam logs "apitools not found" through the root logger when it is imported, on every
# command (--help included); it says nothing about a Larvatus job.
install_noise_filter()

__all__ = ["Redactor", "DocumentError", "DeadLetter"]


def __getattr__(name: str):
    """`larvatus.Redactor`, `larvatus.DocumentError` and `larvatus.DeadLetter`, imported on
    first use so that `import larvatus` stays light (the API loads spaCy and ONNX Runtime)."""
    if name in __all__:
        if name == "DeadLetter":
            from larvatus.transforms.records import DeadLetter

            return DeadLetter
        from larvatus import api

        return getattr(api, name)
    raise AttributeError(f"module 'larvatus' has no attribute {name!r}")
