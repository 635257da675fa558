npm install --save-dev ./cosmos-emulator-linux-x64-0.1.0.tgz ./cosmos-emulator-0.1.0.tgz @azure/cosmos@4.9
