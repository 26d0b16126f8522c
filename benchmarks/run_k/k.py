import json,sys,time
from pathlib import Path
import torch
sys.path.insert(0,'.')
import kernels.measure.timing as T
from kernels.bodies.torch_peers import add_relu_compile as C, add_relu_eager as E
P="/tmp/p.json"
def med(f):return T.summarize(T.time_gpu(f,reps=20))[0]*1e3
def ks(f):
    from torch.profiler import ProfilerActivity,profile
    f();torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(3):f()
        torch.cuda.synchronize()
    p.export_chrome_trace(P)
    K=("grid","block","registers per thread","shared memory","blocks per SM","warps per SM")
    return [{"name":e["name"][:120],"dur":e.get("dur"),**{k:e["args"].get(k) for k in K}} for e in json.load(open(P))["traceEvents"] if e.get("cat")=="kernel"]
def sm():
    r=[]
    for n in (1,16,256,1024,16384,65536):
        x=torch.randn(n,4096,device="cuda");k=ks(lambda:torch.softmax(x,dim=1));r.append({"rows":n,"k":k[:1],"dur":[a["dur"] for a in k]});print(r[-1],flush=True)
    return r
def cc():
    r=[]
    for n in [2**k for k in range(12,23,2)]:
        x,y=torch.randn(n,device="cuda"),torch.randn(n,device="cuda");f=lambda:C(x,y,None);f()
        s=med(f);T.SPIN_CYCLES=10**6;l=med(f);T.SPIN_CYCLES=10**5
        t=time.perf_counter()
        for _ in range(200):f()
        torch.cuda.synchronize();h=(time.perf_counter()-t)/200*1e6
        k=ks(f);r.append({"n":n,"ev_spin50":s,"ev_spin500":l,"host_us":h,"nk3":len(k),"kus":[a["dur"] for a in k],"k":k[:1]});print(r[-1],flush=True)
    return r
def pr():
    r=[]
    for n in [2**k for k in range(12,29)]:
        x,y=torch.randn(n,device="cuda"),torch.randn(n,device="cuda");a,b=torch.empty_like(x),torch.empty_like(x)
        r.append({"n":n,"copy":med(lambda:a.copy_(x)),"pair":med(lambda:(a.copy_(x),b.copy_(y))),"eager":med(lambda:E(x,y,a))});print(r[-1],flush=True)
    return r
o=Path(sys.argv[1]);R={"created":time.strftime("%Y-%m-%dT%H:%M:%SZ",time.gmtime()),"device":torch.cuda.get_device_name(),"torch":torch.__version__,"method":T.gpu_method("flush",20,T.FLUSH_MIN_BYTES)}
for nm,f in (("softmax",sm),("compile",cc),("pairs",pr)):
    try:R[nm]=f()
    except Exception as e:R[nm]=repr(e);print(nm,e,flush=True)
    (o/"run_k.json").write_text(json.dumps(R,indent=1))
