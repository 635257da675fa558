// The control API from Node's standard library, shared by the recipes:
// signed with the account key like an account read (no resource type, no link).
import { createHmac } from "node:crypto";

export const KEY =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
export const ENDPOINT = "http://localhost:8081";

export async function control(method, path, body) {
  const date = new Date().toUTCString();
  const payload = `${method.toLowerCase()}\n\n\n${date.toLowerCase()}\n\n`;
  const sig = createHmac("sha256", Buffer.from(KEY, "base64")).update(payload).digest("base64");
  const response = await fetch(ENDPOINT + path, {
    method,
    headers: {
      "x-ms-date": date,
      authorization: encodeURIComponent(`type=master&ver=1.0&sig=${sig}`),
      "content-type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}
