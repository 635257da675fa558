# The control API through the Python package's client (pip install
# cosmos-emulator), for the emulator start.sh started; shared by the recipes.
from cosmos_emulator import WELL_KNOWN_KEY as KEY
from cosmos_emulator import Control

ENDPOINT = "http://localhost:8081"
control = Control(ENDPOINT, KEY)  # control.reset(), control.add_fault(...), control.take_down(...)
