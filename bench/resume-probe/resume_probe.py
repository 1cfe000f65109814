"""One client, two servers, at rest: how long a reconnect with Last-Event-ID takes, from the request's send to
the first replayed event's bytes (see README.md). Standard library only.

  python3 resume_probe.py iq    PORT N SLEEP_S JWT_SECRET   # IQ-Stream: publishes a run of 202 events first
  python3 resume_probe.py nchan PORT N SLEEP_S SECRET       # Nchan with the bench's secure_link config
"""
import socket, time, sys, json, hmac, hashlib, base64, random, statistics
def b64(b): return base64.urlsafe_b64encode(b).rstrip(b'=').decode()
def token(secret):
    h = b64(json.dumps({"alg":"HS256","typ":"JWT"}).encode())
    p = b64(json.dumps({"exp": int(time.time())+3600, "iqstream": {"publish":["*"],"subscribe":["*"]}}).encode())
    s = b64(hmac.new(secret.encode(), (h+'.'+p).encode(), hashlib.sha256).digest())
    return h+'.'+p+'.'+s
def req(port, data):
    s = socket.create_connection(('127.0.0.1', port)); s.sendall(data); out=b''
    s.settimeout(2)
    try:
        while True:
            c = s.recv(65536)
            if not c: break
            out += c
    except socket.timeout: pass
    s.close(); return out
def time_resume(port, request, marker, n, sleep):
    ts=[]
    for i in range(n):
        s = socket.create_connection(('127.0.0.1', port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        r = request(i)
        time.sleep(0.0005)
        t0 = time.perf_counter_ns(); s.sendall(r); buf=b''
        while marker not in buf:
            c = s.recv(65536)
            if not c: raise Exception('closed: %r' % buf[:300])
            buf += c
        ts.append((time.perf_counter_ns()-t0)/1e3); s.close(); time.sleep(sleep)
    ts.sort(); return ts
def sse_get(path, headers, last_id):
    """The EventSource reconnect: a GET of the stream with Last-Event-ID."""
    return ('GET %s HTTP/1.1\r\nHost: x\r\n%sAccept: text/event-stream\r\nLast-Event-ID: %s\r\n\r\n'
            % (path, headers, last_id)).encode()
which, port = sys.argv[1], int(sys.argv[2]); n=int(sys.argv[3]); sleep=float(sys.argv[4])
ev = lambda i: json.dumps({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"tok%04d " % i + "x"*40})
if which == 'iq':
    tok = token(sys.argv[5]); run = 'probe-%d' % random.randrange(1<<30)
    body = '\n'.join([json.dumps({"type":"RUN_STARTED","threadId":"t","runId":run}), json.dumps({"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"})] + [ev(i) for i in range(200)]) + '\n'
    r = req(port, ('POST /v1/runs/%s/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\nConnection: close\r\n\r\n' % (run, tok, len(body))).encode() + body.encode())
    print(r.split(b'\r\n')[0])
    mk = lambda i: sse_get('/v1/runs/%s/events' % run, 'Authorization: Bearer %s\r\n' % tok, 150 + i % 40)
else:
    secret = sys.argv[5]; chan = 'probe%d' % random.randrange(1<<30)
    for i in range(200):
        d = ev(i).encode()
        req(port, ('POST /pub/%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n' % (chan, len(d))).encode() + d)
    exp = int(time.time()) + 3600
    md5 = b64(hashlib.md5(('%d%s %s' % (exp, chan, secret)).encode()).digest())
    full = req(port, ('GET /sub/%s?md5=%s&expires=%d HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n' % (chan, md5, exp)).encode())
    ids = [l[4:] for l in full.decode().split('\n') if l.startswith('id: ')]
    print(full.split(b'\r\n')[0], len(ids), ids[:2])
    mk = lambda i: sse_get('/sub/%s?md5=%s&expires=%d' % (chan, md5, exp), '', ids[150 + i % 40])
ts = time_resume(port, mk, b'\nid: ', n, sleep)
q = lambda p: ts[int(p*(len(ts)-1))]
print('%s n=%d p10=%.0f p50=%.0f p90=%.0f p99=%.0f mean=%.0f us' % (which, n, q(.1), q(.5), q(.9), q(.99), statistics.mean(ts)))
