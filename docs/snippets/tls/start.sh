cosmos-emulator --tls --cert-out emulator.pem
