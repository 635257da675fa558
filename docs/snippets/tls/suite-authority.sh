# Once (a CI step, or by hand): an authority of your own, and a Java trust
# store holding it, which Surefire hands every test JVM (the pom below).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
  -subj "/CN=test suite CA" -addext basicConstraints=critical,CA:TRUE \
  -addext keyUsage=critical,keyCertSign,digitalSignature -keyout ca-key.pem -out ca.pem
keytool -importcert -noprompt -alias cosmos-emulator -file ca.pem \
  -storetype PKCS12 -keystore cosmos-trust.p12 -storepass changeit

# Every emulator the suite starts, on any port, signs with it.
for n in 1 2; do
  cosmos-emulator --tls --cert ca.pem --cert-key ca-key.pem --port 0 --parent-pid $$ > emulator-$n.out &
done
for n in 1 2; do
  until grep -q '^listening on ' emulator-$n.out; do sleep 0.1; done
  curl --fail --silent --cacert ca.pem -o /dev/null "$(sed -n 's/^listening on //p' emulator-$n.out)/_explorer/emulator.pem"
done
kill $(jobs -p)
