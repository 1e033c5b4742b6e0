#!/usr/bin/env python3
"""model_deploy.py: see tpu_sdk.deploy (the SDK's stand-in for the vendor command)."""
import sys

from tpu_sdk.deploy import main

sys.exit(main())
