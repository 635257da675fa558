# The control API from Python's standard library, shared by the recipes:
# signed with the account key like an account read (no resource type, no link).
import base64, hashlib, hmac, json, urllib.parse, urllib.request
from email.utils import formatdate

KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
ENDPOINT = "http://localhost:8081"


def control(method, path, body=None):
    date = formatdate(usegmt=True)
    payload = f"{method.lower()}\n\n\n{date.lower()}\n\n"
    mac = hmac.new(base64.b64decode(KEY), payload.encode(), hashlib.sha256)
    token = "type=master&ver=1.0&sig=" + base64.b64encode(mac.digest()).decode()
    request = urllib.request.Request(
        ENDPOINT + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"x-ms-date": date, "authorization": urllib.parse.quote(token, safe=""),
                 "content-type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        text = response.read()
        return json.loads(text) if text else None
