import jobd

c = jobd.Client()                             # $JOBD_SERVER, else http://127.0.0.1:8080; $JOBD_TOKEN
job = c.enqueue("hello", {"name": "world"})   # -> jobd.Job
done = c.wait(job.id, timeout=30)             # the job once it is succeeded, dead or cancelled
print(done.status, done.result)
