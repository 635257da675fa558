pip install cosmos_emulator-0.1.0-py3-none-manylinux_2_35_x86_64.whl azure-cosmos pytest
