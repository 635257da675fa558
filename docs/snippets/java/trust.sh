# The emulator's certificate (this first download cannot verify it: it is
# what will be trusted), then a PKCS12 trust store holding it alone.
curl --fail --silent --show-error --insecure -o emulator.pem https://localhost:8081/_explorer/emulator.pem
keytool -importcert -noprompt -alias cosmos-emulator -file emulator.pem -storetype PKCS12 -keystore emulator.p12 -storepass changeit
