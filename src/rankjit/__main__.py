import sys

from rankjit.cli import main

sys.exit(main())
