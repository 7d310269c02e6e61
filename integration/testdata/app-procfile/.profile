export TRACE="${TRACE:-}[.profile \$0=$0 \$@=$*]"
export FROM_APP_PROFILE=yes
