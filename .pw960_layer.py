# throwaway: ops 52, 56, 60 of mobilenetv2_160_a1 as kernels_vs_cmsis.product() builds them (nucleo-l4r5zi)
import sys, tempfile
from pathlib import Path
sys.argv = sys.argv[:1]
sys.path.insert(0, 'benchmarks')
import kernels_vs_cmsis as k
k.use_memory_model('nucleo-l4r5zi')
g = k.tflite_reader.parse((k.SHARED / 'models' / 'mobilenetv2_160_a1.tflite').read_bytes())
ops = [int(a) for a in (sys.argv_ops if hasattr(sys, 'argv_ops') else '52,60'.split(','))]
work = Path(tempfile.mkdtemp(prefix='pw960-'))
for i in ops:
    op = g.operators[i]
    r = k.product(g, op, i, work, False)
    print(i, r)
