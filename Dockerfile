# stockdemo for any container host. Not built or tested on the development
# machine (Docker does not run there): see docs/hosting.md.
#
#   docker build -t stockdemo .
#   docker run --rm -p 8501:8501 stockdemo        # then open http://localhost:8501
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# One torch thread per op (the app's default, stated here so a host can change
# it): steady run times when many sessions share a small CPU box.
ENV STOCKDEMO_TORCH_THREADS=1
# Settings for a server that .streamlit/config.toml leaves at Streamlit's
# defaults: no file watcher (nothing changes in the image, and a changed file
# makes Streamlit unload modules while other sessions import them), headless,
# no usage statistics. runner.postScriptGC=false comes from config.toml.
ENV STREAMLIT_SERVER_FILE_WATCHER_TYPE=none STREAMLIT_SERVER_HEADLESS=true \
    STREAMLIT_BROWSER_GATHER_USAGE_STATS=false

WORKDIR /app

# Dependencies first, so code changes do not reinstall torch. The extra index is
# PyTorch's CPU-only wheel repository: the pin torch==2.13.0 then resolves to
# 2.13.0+cpu (754 MB installed, all dependencies 846 MB, measured in our venv)
# instead of the default Linux wheel, which also pulls the CUDA libraries (GBs).
COPY requirements.txt .
RUN pip install --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt \
    && python -c "import torch; assert torch.version.cuda is None, 'CUDA wheel installed'; print('torch', torch.__version__)"

# Unprivileged user; the app writes nothing to its own folder.
RUN useradd --create-home --uid 10001 stockdemo
COPY --chown=root:root . .
RUN python -m compileall -q app.py pages stockdemo
USER stockdemo

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request, sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).status == 200 else 1)"

CMD ["streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.port", "8501"]
