# Sends the same requests to an RPC API and prints one JSON line per answer.
import urllib.request, urllib.parse, sys, json
API=sys.argv[1]
def post(path, params=(), parts=None):
    q=urllib.parse.urlencode(list(params))
    url=API+'/api/v0/'+path+('?'+q if q else '')
    b='----xyzBOUNDARY'
    body=b''
    for name, fname, ctype, content in (parts or []):
        body+=f'--{b}\r\nContent-Disposition: form-data; name="{name}"; filename="{fname}"\r\nContent-Type: {ctype}\r\n\r\n'.encode()+content+b'\r\n'
    if parts: body+=f'--{b}--\r\n'.encode()
    req=urllib.request.Request(url, data=body, method='POST')
    if parts: req.add_header('Content-Type', f'multipart/form-data; boundary={b}')
    try:
        r=urllib.request.urlopen(req); code=r.status; txt=r.read().decode()
    except urllib.error.HTTPError as e:
        code=e.code; txt=e.read().decode()
    out=[]
    for line in txt.strip().split('\n'):
        try: out.append(json.loads(line))
        except Exception: out.append(line)
    return {"status":code,"body":out}
F='application/octet-stream'; D='application/x-directory'
cases=[]
def case(name, path, params=(), parts=None):
    r=post(path, params, parts); cases.append({"name":name,"request":{"path":path,"params":list(params),"parts":[[p[0],p[1],p[2],p[3].decode('latin1')] for p in (parts or [])]}, "answer":r}); return r
def h(r): return r["body"][-1]["Hash"]
r=case("add part metadata, no preserve flags","add",[],[('file?mode=0777&mtime=5&mtime-nsecs=0','f',F,b'hello')])
case("stat of it","files/stat",[("arg","/ipfs/"+h(r))])
r=case("add part metadata, preserve-mode and preserve-mtime","add",[("preserve-mode","true"),("preserve-mtime","true")],[('file?mode=0777&mtime=5&mtime-nsecs=7','f',F,b'hello')])
case("stat of it","files/stat",[("arg","/ipfs/"+h(r))])
r=case("add --mode --mtime --mtime-nsecs","add",[("mode","0644"),("mtime","1000"),("mtime-nsecs","5")],[('file','f',F,b'hello')])
case("stat of it","files/stat",[("arg","/ipfs/"+h(r))])
case("add cid-version=1 raw-leaves with part metadata","add",[("cid-version","1"),("raw-leaves","true")],[('file?mode=0123&mtime=1000','f',F,bytes([0,1,2]))])
case("add cid-version=1 with --mode","add",[("cid-version","1"),("mode","0123"),("mtime","1000")],[('file','f',F,bytes([0,1,2]))])
case("add directory part with metadata","add",[],[('file?mode=0123&mtime=1000','foo',D,b'')])
case("add directory part with metadata, preserve","add",[("preserve-mode","true"),("preserve-mtime","true")],[('file?mode=0123&mtime=1000','foo',D,b'')])
r=case("add tree with metadata, preserve","add",[("preserve-mode","true"),("preserve-mtime","true")],[('dir?mode=0755&mtime=2000','d',D,b''),('file?mode=0532&mtime=1700000000&mtime-nsecs=123000000','d%2Fa',F,b'aaa'),('file-1?mode=0600&mtime=1700000001','d%2Fb',F,b'bbb')])
root=h(r)
case("ls of it","ls",[("arg","/ipfs/"+root)])
case("ls of it, long","ls",[("arg","/ipfs/"+root),("long","true")])
case("stat of the dir","files/stat",[("arg","/ipfs/"+root)])
case("stat of a file in it","files/stat",[("arg","/ipfs/"+root+"/a")])
case("stat --format","files/stat",[("arg","/ipfs/"+root+"/a"),("format","<mode> <mode-octal> <mtime> <mtime-secs> <mtime-nsecs> <type>")])
case("files cp into MFS","files/cp",[("arg","/ipfs/"+root),("arg","/d")])
case("files ls -l","files/ls",[("arg","/d"),("long","true")])
case("files chmod","files/chmod",[("arg","0640"),("arg","/d/a")])
case("stat after chmod","files/stat",[("arg","/d/a")])
case("files touch --mtime","files/touch",[("arg","/d/a"),("mtime","1800000000"),("mtime-nsecs","9")])
case("stat after touch","files/stat",[("arg","/d/a")])
case("files chmod of a dir","files/chmod",[("arg","0700"),("arg","/d")])
case("files touch of a dir","files/touch",[("arg","/d"),("mtime","1234")])
case("stat of the dir","files/stat",[("arg","/d")])
case("stat of root","files/stat",[("arg","/")])
case("files chmod bad mode","files/chmod",[("arg","9x"),("arg","/d/a")])
case("files chmod missing path","files/chmod",[("arg","0644"),("arg","/nope")])
case("files touch missing path","files/touch",[("arg","/nope"),("mtime","5")])
case("files mkdir (Kubo takes no mode)","files/mkdir",[("arg","/m"),("mode","0700"),("mtime","5")])
case("stat of it","files/stat",[("arg","/m")])
case("files write (Kubo takes no mode)","files/write",[("arg","/w"),("create","true"),("mode","0600"),("mtime","5")],[('file','w',F,b'Hello, world!')])
case("stat of it","files/stat",[("arg","/w")])
case("files touch of a new path","files/touch",[("arg","/w"),("mtime","77")])
case("stat of it","files/stat",[("arg","/w")])
case("root after all","files/stat",[("arg","/")])
json.dump(cases, sys.stdout, indent=1)
