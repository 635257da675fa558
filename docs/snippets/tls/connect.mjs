import https from "node:https";
import fs from "node:fs";
import { CosmosClient } from "@azure/cosmos";

const KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
const agent = new https.Agent({ ca: fs.readFileSync("emulator.pem") });
const client = new CosmosClient({ endpoint: "https://localhost:8081", key: KEY, agent });
const { resources } = await client.databases.readAll().fetchAll();
console.log(resources.map((db) => db.id));
