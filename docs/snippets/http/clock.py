# The control API with nothing but Python's standard library: each request
# is signed with the account key like an account read (no resource type, no link).
import base64, hashlib, hmac, json, urllib.parse, urllib.request
from email.utils import formatdate

KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


def control(method, path, body=None):
    date = formatdate(usegmt=True)
    payload = f"{method.lower()}\n\n\n{date.lower()}\n\n"
    mac = hmac.new(base64.b64decode(KEY), payload.encode(), hashlib.sha256)
    token = "type=master&ver=1.0&sig=" + base64.b64encode(mac.digest()).decode()
    request = urllib.request.Request(
        "http://localhost:8081" + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"x-ms-date": date, "authorization": urllib.parse.quote(token, safe=""),
                 "content-type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)


before = control("GET", "/_emulator/clock")["now"]
after = control("POST", "/_emulator/clock", {"advance": 3600})["now"]  # one hour passes
assert after == before + 3600
print(control("POST", "/_emulator/purge"))  # {"purged": n}: every item due is gone
