import { Client } from "@jobd/client";

const client = new Client(); // $JOBD_SERVER (default http://127.0.0.1:8080), $JOBD_TOKEN
const job = await client.enqueue("hello", { name: "world" });
const done = await client.wait(job.id, { timeout: 30 }); // until it succeeds, is dead or cancelled
console.log(done.status, JSON.stringify(done.result));
