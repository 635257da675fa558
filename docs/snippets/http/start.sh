cosmos-emulator --clock manual
