"""``python -m t2rag.cli``: the t2rag command."""

import sys

from t2rag.cli import main

sys.exit(main())
