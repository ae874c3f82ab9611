import sys, tempfile, json
from pathlib import Path
sys.path.insert(0, 'benchmarks')
import numpy as np
import kernels_vs_cmsis as k
k.use_memory_model('nucleo-l4r5zi')
from buildtool import pipeline
from buildtool.firmware import runner, cycles
from buildtool.model.ir import sub_graph
g = k.tflite_reader.parse((k.SHARED / 'models' / 'mobilenetv2_160_a1.tflite').read_bytes())
i = int(sys.argv[1])
one, _, _ = sub_graph(g, [g.operators[i]], f"layer{i}")
out = Path(tempfile.mkdtemp(prefix='pw960m-'))
x = np.random.default_rng(i).integers(-128, 128, one.tensors[one.inputs[0]].shape).astype(np.int8)
pipeline.build(one, 'nucleo-l4r5zi', out, options={"inplace": False}, say=lambda l: None)
y, prof, _ = runner.run('nucleo-l4r5zi', out, x)
o = prof['ops'][0]
print('modelled', o['modelled_cycles'], 'zw', cycles.estimate(o['mix'], cpu='cortex-m4'))
mix = o['mix']
tot = sum(mix.values())
for kk, v in sorted(mix.items(), key=lambda t: -t[1])[:30]:
    print(f"{v:>10} {kk}")
print('instr', tot)
print({kk: v for kk, v in o.items() if kk not in ('mix',)})
