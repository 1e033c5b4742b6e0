#!/usr/bin/env python3
"""npz_tool.py: see tpu_sdk.npz_tool."""
import sys

from tpu_sdk.npz_tool import main

sys.exit(main())
