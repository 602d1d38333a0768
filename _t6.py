import time, numpy as np, bnexplore as bx, os
print(os.getloadavg())
alarm = bx.networks.load("alarm").sample(10_000, seed=0)
bx.averaging.order_mcmc(alarm.iloc[:300,:6], max_parents=3, n_iter=100, n_chains=1)
def tm(f, what):
    t=time.perf_counter(); c=time.process_time(); r=f(); print(what, "wall %.2f cpu %.2f" % (time.perf_counter()-t, time.process_time()-c)); return r
tm(lambda: bx.averaging.order_mcmc(alarm, max_parents=3, n_iter=1, n_chains=1), "table")
tm(lambda: bx.averaging.order_mcmc(alarm, max_parents=3, n_iter=20_000, n_chains=1, thin=20_000), "1x20k no record")
tm(lambda: bx.averaging.order_mcmc(alarm, max_parents=3, n_iter=20_000, n_chains=1, p_adjacent=1.0, thin=20_000), "1x20k adjacent only")
tm(lambda: bx.averaging.order_mcmc(alarm, max_parents=3, n_iter=20_000, n_chains=1, thin=20), "1x20k 1000 records")
tm(lambda: bx.averaging.order_mcmc(alarm, max_parents=3, n_iter=20_000, n_chains=1, thin=20, sample_dags=True), "1x20k 1000 records + dags")
