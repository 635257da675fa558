cosmos-emulator --tls --clock manual
