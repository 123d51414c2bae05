import { Worker, Permanent } from "@jobd/client";

const worker = new Worker({ concurrency: 8 }); // the same $JOBD_SERVER and $JOBD_TOKEN
worker.handle("hello", async (job, ctx) => {
  const name = job.payload?.name ?? "world";
  if (typeof name !== "string") throw new Permanent("payload.name must be a string"); // dead at once
  // ctx.signal aborts on cancel, timeout, a lost lease or shutdown: pass it on to fetch() & co.
  return { greeting: `hello, ${name}`, job: job.id, attempt: job.attempt }; // the job's result
});
await worker.run(); // until SIGTERM or SIGINT, then drains (shutdownGrace, 30 s)
