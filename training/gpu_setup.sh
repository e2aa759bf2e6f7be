# Sourced by the lent GPU machine's run scripts (gpu.sh, gpu_vision.sh): unpack the carried fonts and corpora, say
# what the machine has, and choose how batches leave the data workers. Sets PY, WORKERS and PIPE.
PY=${PYTHON:-python3}
WORKERS=${WORKERS:-$(( $(nproc) - 2 ))}
[ -d training/assets ] || tar -C training -xJf training/packed/assets.tar.xz
export SPECULA_ASSETS=training/assets PYTHONUNBUFFERED=1
"$PY" -c "import torch, PIL, numpy, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'pillow', PIL.__version__, 'numpy', numpy.__version__)"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null || true
# Batches cross from the data workers in shared memory (about 1 GB in flight); containers often give /dev/shm
# 64 MB. Grow it, and where that is refused, send the batches through pipes.
timeout 5 mount -o remount,size=16G /dev/shm 2>/dev/null || true
shm_kb=$(df -k --output=avail /dev/shm 2>/dev/null | tail -1 || echo 0)
PIPE=""
if [ "${shm_kb:-0}" -lt 8000000 ]; then PIPE="--pipe-batches"; fi
echo "/dev/shm: ${shm_kb:-0} kB free ${PIPE:-(shared-memory batches)}"; nproc; free -g 2>/dev/null | head -2 || true
