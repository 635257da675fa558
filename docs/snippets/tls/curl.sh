# Anything that reads the system trust store (curl, or .NET and Java after importing it):
curl --fail --cacert emulator.pem https://localhost:8081/_explorer/emulator.pem
