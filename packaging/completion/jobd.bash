# bash completion for jobd(1): subcommands, their options, and queue and
# schedule names asked of the running server (jobd queues / jobd schedule ls,
# at most $JOBD_COMPLETION_TIMEOUT seconds, 1 by default; --server on the
# line or $JOBD_SERVER is honoured). It needs
# nothing from the bash-completion package, so it also works when sourced.

_jobd_names() # what: queues | schedules
{
    local server=() i
    for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
        [[ ${COMP_WORDS[i]} == --server && -n ${COMP_WORDS[i+1]-} ]] &&
            server=(--server "${COMP_WORDS[i+1]}")
    done
    local cmd=(queues)
    [[ $1 == schedules ]] && cmd=(schedule ls)
    timeout "${JOBD_COMPLETION_TIMEOUT:-1}" "${COMP_WORDS[0]}" "${cmd[@]}" "${server[@]}" 2>/dev/null |
        sed -n 's/^{"name":"\([^"]*\)".*/\1/p'
}

_jobd()
{
    local cur=${COMP_WORDS[COMP_CWORD]-} prev=${COMP_WORDS[COMP_CWORD-1]-}
    local cmd=${COMP_WORDS[1]-} sub=${COMP_WORDS[2]-} words=""
    local commands="server worker migrate submit job jobs workflow workflows queues workers schedule cron"
    local client="--server"
    COMPREPLY=()
    if ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "$commands help --help --version" -- "$cur"))
        return
    fi
    if [[ $cmd == help ]]; then # jobd help CMD: the command names
        ((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        return
    fi
    case $prev in
        --config|--worker-config|--tokens)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --queue|--queues)
            COMPREPLY=($(compgen -W "$(_jobd_names queues)" -- "$cur")); return ;;
        --schedule)
            COMPREPLY=($(compgen -W "$(_jobd_names schedules)" -- "$cur")); return ;;
        --status)
            if [[ $cmd == workflows ]]; then
                COMPREPLY=($(compgen -W "running succeeded failed" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "waiting pending running succeeded dead cancelled" -- "$cur"))
            fi
            return ;;
        --on-parent-failure)
            COMPREPLY=($(compgen -W "cancel run" -- "$cur")); return ;;
        --catchup)
            COMPREPLY=($(compgen -W "once all skip" -- "$cur")); return ;;
        --log-format)
            COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
        --log-level)
            COMPREPLY=($(compgen -W "debug info warn error" -- "$cur")); return ;;
        --access-log)
            COMPREPLY=($(compgen -W "notable all off" -- "$cur")); return ;;
        --db|--server|--listen|--name|--payload|--at|--in|--priority|--max-attempts|--key|--traceparent|--group|--search|--scan|--depends-on|--debounce|--unique|\
        --timeout|--type|--limit|--after|--count|--tz|--from|-n|--id|--concurrency|--shutdown-grace|\
        --poll-interval|--reap-interval|--backoff-base|--backoff-cap|--max-lease|--retention|--retention-succeeded|--retention-dead|\
        --threads|--db-connections|--notify-db|--max-connections|--max-connections-per-ip|--allowed-hosts|\
        --request-timeout|--access-log-slow|--max-running|--rate|--group-max-running|--group-rate|--max-schedules|--max-workers|--max-bulk|--max-waits)
            return ;;
    esac
    case $cmd in
        server) words="--config --db --listen --worker-config --tokens --reap-interval
                       --backoff-base --backoff-cap --max-lease --retention --retention-succeeded --retention-dead --retention-allow-short --insecure
                       --allowed-hosts --shutdown-grace --threads --log-format --log-level --access-log --access-log-slow
                       --db-connections --notify-db --max-connections
                       --max-connections-per-ip --request-timeout --max-schedules
                       --max-workers --max-bulk --max-waits --check-config --help" ;;
        worker) words="--db --server --config --concurrency --queues --id
                       --shutdown-grace --poll-interval --log-format --log-level
                       --db-connections --notify-db --help" ;;
        migrate) words="--db --status --help" ;;
        submit) words="--payload --at --in --priority --queue --max-attempts --key
                       --timeout --traceparent --group --depends-on --on-parent-failure --debounce --unique
                       --wait $client --help" ;;
        job) ((COMP_CWORD == 2)) && words="show cancel retry attempts delete log" || words="$client" ;;
        jobs) words="retry cancel delete --status --queue --type --schedule --created-after
                     --created-before --key --ids --due --scheduled --search --scan --limit --after
                     --dry-run $client --help" ;;
        queues)
            if ((COMP_CWORD == 2)); then
                words="limit pause resume groups $client --help"
            elif [[ $sub == @(limit|pause|resume|groups) && $cur != -* ]] && ((COMP_CWORD == 3)); then
                words=$(_jobd_names queues)
            elif [[ $sub == limit ]]; then
                words="--max-running --rate --group-max-running --group-rate $client --help"
            elif [[ $sub == groups ]]; then
                words="--limit $client --help"
            else
                words="$client --help"
            fi ;;
        workers) words="$client --help" ;;
        workflow)
            if ((COMP_CWORD == 2)); then
                words="submit show cancel retry delete --help"
            elif [[ $sub == submit && $cur != -* ]] && ((COMP_CWORD == 3)); then
                COMPREPLY=($(compgen -f -- "$cur")); return
            else
                words="$client --help"
            fi ;;
        workflows) words="--status --name --limit --after $client --help" ;;
        schedule)
            if ((COMP_CWORD == 2)); then
                words="add ls rm pause resume trigger --help"
            elif [[ $sub == @(rm|pause|resume|trigger) && $cur != -* ]] && ((COMP_CWORD == 3)); then
                words=$(_jobd_names schedules)
            elif [[ $sub == add ]]; then
                words="--tz --payload --queue --priority --max-attempts --catchup $client"
            else
                words="$client"
            fi ;;
        cron) ((COMP_CWORD == 2)) && words="next" || words="--tz --from -n --count" ;;
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _jobd jobd
