cosmos-emulator --clock manual --rate-limit --regions westus,eastus
