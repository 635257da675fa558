pip install --find-links . cosmos-emulator azure-cosmos pytest
