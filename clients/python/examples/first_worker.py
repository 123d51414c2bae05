import jobd

w = jobd.Worker(concurrency=8)                # every queue; the same $JOBD_SERVER and $JOBD_TOKEN

@w.handler("hello")
def hello(job, ctx):                          # ctx.attempt, ctx.cancelled, ctx.deadline, ctx.wait(s)
    name = (job.payload or {}).get("name", "world")
    if not isinstance(name, str):
        raise jobd.Permanent("payload.name must be a string")   # dead at once, no retry
    return {"greeting": f"hello, {name}", "job": job.id, "attempt": job.attempt}   # the result

w.run()                                       # until SIGTERM/SIGINT, then drains
