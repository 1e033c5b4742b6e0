"""The part of tpu-mlir's `transform` package custom-op users import: TpuLang."""
