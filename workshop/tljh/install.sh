#!/usr/bin/env bash
# The Littlest JupyterHub for a workshop of the course, on a fresh Ubuntu VM (as root).
#
#   sudo REPO=https://github.com/ORG/REPO BRANCH=main PASSWORD='...' \
#        CONNECTIONS=./workshop-connections bash workshop/tljh/install.sh
#
# REPO/BRANCH: the course repository (learners' nbgitpuller landing page and their environment);
# PASSWORD: the shared password of the day; CONNECTIONS: the folder `python -m course_lib.workshop`
# wrote (one <name>.env per learner). Re-running it is safe: it only sets values again.
set -euo pipefail
: "${REPO:?set REPO=https://github.com/ORG/REPO}"
: "${PASSWORD:?set PASSWORD to the shared password of the day}"
: "${CONNECTIONS:?set CONNECTIONS to the folder of <name>.env files}"
BRANCH="${BRANCH:-main}"
HERE="$(cd "$(dirname "$0")" && pwd)"

if ! command -v tljh-config >/dev/null; then
  # the course (and nbgitpuller) into the learners' environment at install time
  requirements="$(mktemp)"
  sed "s#git+https://github.com/ORG/REPO@<tag>#git+${REPO}@${BRANCH}#" "$HERE/requirements.txt" > "$requirements"
  curl -fsSL https://tljh.jupyter.org/bootstrap.py | python3 - --admin instructor \
    --user-requirements-txt-url "file://$requirements"
fi

# the learners' connection files: readable by the hub (root) only
install -d -m 0700 /srv/workshop-connections
install -m 0600 "$CONNECTIONS"/*.env /srv/workshop-connections/

# the course's hub settings (connection injection, nbgitpuller landing page)
install -m 0644 "$HERE/../hub/course_hub.py" /opt/tljh/config/jupyterhub_config.d/course_hub.py
install -d /etc/systemd/system/jupyterhub.service.d
cat > /etc/systemd/system/jupyterhub.service.d/course.conf <<CONF
[Service]
Environment=COURSE_HUB_CONNECTIONS=/srv/workshop-connections
Environment=COURSE_HUB_ASSIGN=name
Environment=COURSE_HUB_REPO=${REPO}
Environment=COURSE_HUB_BRANCH=${BRANCH}
CONF
systemctl daemon-reload

# the values of config.yaml
tljh-config set auth.type dummy
tljh-config set auth.DummyAuthenticator.password "$PASSWORD"
tljh-config set limits.memory 2G
tljh-config set limits.cpu 1
tljh-config set services.cull.enabled true
tljh-config set services.cull.timeout 3600
tljh-config set services.cull.every 300
tljh-config set user_environment.default_app jupyterlab
tljh-config reload hub
systemctl restart jupyterhub
echo "TLJH ready. Learners open: http://$(hostname -f)/hub/login (their roster name + the password)"
