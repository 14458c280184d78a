# A stand-in for `codex app-server` (the codex preset, SPEC §8), sourced by
# fakecli when run as `codex app-server`. It speaks the JSON-RPC of codex
# 0.171.0's app-server on stdio, its messages cut from the recordings in
# ../agent-streams/codex-app-server-*.jsonl: it answers initialize,
# thread/start (a new thread, THREAD below) or thread/resume (THREAD only;
# another id is refused as codex refuses a thread it does not have), then
# runs a turn for each turn/start until stdin closes, and refuses a
# turn/steer between turns ("no active turn to steer") and a later
# turn/start whose message begins "refuse". Every stdin line is
# logged to $FAKECLI_LOG as "stdin<TAB>line", and the message of the first
# turn/start as "codex<TAB>app-server ...<TAB>message".
#
# The message of a turn picks what it does: "slow ..." starts a command
# that runs until the next stdin line: a turn/steer is answered with the
# turn's id and taken at the command's end (a userMessage item with the
# steer's clientId, in the same turn), turn/interrupt ends the turn as
# interrupted and leaves its command running, as codex does, until stdin
# closes; "fail ..." fails the turn as an HTTP 500 does; "ask FILE" asks
# to run `touch FILE` (item/commandExecution/requestApproval) and touches
# it when accepted; "crash ..." exits 1 before its turn starts; "retry ..."
# reports a model server out of reach, retried, then answers; anything else
# answers "FAKE: <message>". Tokens: 10 in and 5 out per model call,
# counted over the thread, whose earlier total a resume reports first.
THREAD=01a2514c-ccac-7f82-a68c-73e61de53adc
in_tok=0 out_tok=0 n=0 calls=0 turn= child=

field() { printf '%s' "$1" | sed -n "s/.*\"$2\":\"\\([^\"]*\\)\".*/\\1/p"; }
rid() { printf '%s' "$1" | sed -n 's/^{"id":\("[^"]*"\|[0-9]*\).*/\1/p'; }
out() { printf '%s\n' "$1"; }
readline() {
	IFS= read -r line || return 1
	printf 'stdin\t%s\n' "$line" >> "$log"
}
usage() { # one model call of turn $turn
	calls=$((calls + 1)) in_tok=$((in_tok + 10)) out_tok=$((out_tok + 5))
	out '{"method":"thread/tokenUsage/updated","params":{"threadId":"'$THREAD'","turnId":"'$turn'","tokenUsage":{"total":{"totalTokens":'$((in_tok + out_tok))',"inputTokens":'$in_tok',"cachedInputTokens":0,"outputTokens":'$out_tok',"reasoningOutputTokens":0},"last":{"totalTokens":15,"inputTokens":10,"cachedInputTokens":0,"outputTokens":5,"reasoningOutputTokens":0}}}}'
}
item() { # phase json: an item of the turn
	out '{"method":"item/'$1'","params":{"item":'"$2"',"threadId":"'$THREAD'","turnId":"'$turn'"}}'
}
user() { # clientId text
	cid=null
	[ -n "$1" ] && cid='"'$1'"'
	n=$((n + 1))
	for phase in started completed; do
		item $phase '{"type":"userMessage","id":"user-'$n'","clientId":'$cid',"content":[{"type":"text","text":"'"$2"'","text_elements":[]}]}'
	done
}
answer() { # text: the agent's message after a model call
	usage
	n=$((n + 1))
	item started '{"type":"agentMessage","id":"msg-'$n'","text":"","phase":null}'
	item completed '{"type":"agentMessage","id":"msg-'$n'","text":"'"$1"'","phase":null}'
}
command() { # phase id status command [exit output]
	extra='"aggregatedOutput":null,"exitCode":null'
	[ -n "$5" ] && extra='"aggregatedOutput":"'$6'","exitCode":'$5
	item "$1" '{"type":"commandExecution","id":"'$2'","command":"/bin/bash -lc '"'$4'"'","cwd":"'"$PWD"'","processId":"4242","source":"agent","status":"'$3'","commandActions":[],'"$extra"'}'
}
ended() { # status [error message]
	err=null
	[ -n "$2" ] && err='{"message":"'"$2"'","codexErrorInfo":"internalServerError","additionalDetails":null}'
	out '{"method":"turn/completed","params":{"threadId":"'$THREAD'","turn":{"id":"'$turn'","items":[],"status":"'$1'","error":'"$err"'}}}'
	turn=
}
begin() { # id clientId text: answer a turn/start and start its turn
	n=$((n + 1)) turn=turn-$n
	out '{"id":'$1',"result":{"turn":{"id":"'$turn'","items":[],"status":"inProgress","error":null}}}'
	out '{"method":"turn/started","params":{"threadId":"'$THREAD'","turn":{"id":"'$turn'","items":[],"status":"inProgress","error":null}}}'
	user "$2" "$3"
}
idle() { # the lines between turns
	case $line in
	*'"method":"turn/start"'*'"text":"refuse'*)
		out '{"error":{"code":-32600,"message":"the fake refuses this turn"},"id":'"$(rid "$line")"'}' ;;
	*'"method":"turn/start"'*) run "$line" ;;
	*'"method":"turn/steer"'*) out '{"error":{"code":-32600,"message":"no active turn to steer"},"id":'"$(rid "$line")"'}' ;;
	esac
}
run() { # a turn/start line
	text=$(field "$1" text)
	begin "$(rid "$1")" "$(field "$1" clientUserMessageId)" "$text"
	case $text in
	slow*)
		usage
		command started call-slow inProgress 'sleep 300'
		sleep 300 &
		child=$!
		readline || exit 0
		case $line in
		*'"method":"turn/steer"'*)
			out '{"id":'"$(rid "$line")"',"result":{"turnId":"'$turn'"}}'
			kill $child 2>/dev/null
			command completed call-slow completed 'sleep 300' 0 ''
			usage
			user "$(field "$line" clientUserMessageId)" "$(field "$line" text)"
			answer "FAKE: slept, and $(field "$line" text)"
			ended completed ;;
		*'"method":"turn/interrupt"'*)
			out '{"id":'"$(rid "$line")"',"result":{}}'
			ended interrupted ;; # its command goes on until stdin closes
		esac ;;
	fail*)
		usage
		out '{"method":"error","params":{"error":{"message":"unexpected status 500 Internal Server Error","codexErrorInfo":"internalServerError","additionalDetails":null},"willRetry":false,"threadId":"'$THREAD'","turnId":"'$turn'"}}'
		ended failed "unexpected status 500 Internal Server Error" ;;
	retry*)
		out '{"method":"error","params":{"error":{"message":"Reconnecting... waiting for network","codexErrorInfo":{"responseStreamDisconnected":{"httpStatusCode":null}},"additionalDetails":"Connection failed: error sending request"},"willRetry":true,"threadId":"'$THREAD'","turnId":"'$turn'"}}'
		answer "FAKE: $text"
		ended completed ;;
	ask\ *)
		file=${text#ask }
		command started call-ask inProgress "touch $file"
		out '{"method":"item/commandExecution/requestApproval","id":0,"params":{"threadId":"'$THREAD'","turnId":"'$turn'","itemId":"call-ask","command":"/bin/bash -lc '"'touch $file'"'","cwd":"'"$PWD"'","reason":null}}'
		readline || exit 0
		case $line in
		*'"decision":"accept"'*|*'"decision":"acceptForSession"'*)
			touch "$file"
			command completed call-ask completed "touch $file" 0 '' ;;
		*) command completed call-ask declined "touch $file" ;;
		esac
		answer "FAKE: asked"
		ended completed ;;
	*)
		answer "FAKE: $text"
		ended completed ;;
	esac
}

readline || exit 0
case $line in
*'"method":"initialize"'*) ;;
*) echo "fake codex app-server: the first line is not initialize: $line" >&2; exit 65 ;;
esac
out '{"id":'"$(rid "$line")"',"result":{"userAgent":"fake/0.171.0","codexHome":"'"$HOME"'/.codex","platformFamily":"unix","platformOs":"linux"}}'
readline || exit 0
case $line in
*'"method":"initialized"'*) ;;
*) echo "fake codex app-server: no initialized notification: $line" >&2; exit 65 ;;
esac
readline || exit 0
case $line in
*'"method":"thread/start"'*) ;;
*'"method":"thread/resume"'*)
	if [ "$(field "$line" threadId)" != "$THREAD" ]; then
		out '{"error":{"code":-32600,"message":"no rollout found for thread id '"$(field "$line" threadId)"'"},"id":'"$(rid "$line")"'}'
		readline || exit 0
		case $line in
		*'"method":"thread/start"'*) ;;
		*) echo "fake codex app-server: no thread/start after a refused resume: $line" >&2; exit 65 ;;
		esac
	else
		in_tok=20 out_tok=10 # the thread's earlier turns
	fi ;;
*) echo "fake codex app-server: no thread/start or thread/resume: $line" >&2; exit 65 ;;
esac
out '{"id":'"$(rid "$line")"',"result":{"thread":{"id":"'$THREAD'","turns":[]},"model":"gpt-5.5","approvalPolicy":"never"}}'
if [ $in_tok -gt 0 ]; then
	out '{"method":"thread/tokenUsage/updated","params":{"threadId":"'$THREAD'","turnId":"turn-earlier","tokenUsage":{"total":{"totalTokens":30,"inputTokens":20,"cachedInputTokens":0,"outputTokens":10,"reasoningOutputTokens":0},"last":{"totalTokens":15,"inputTokens":10,"cachedInputTokens":0,"outputTokens":5,"reasoningOutputTokens":0}}}}'
fi
readline || exit 0
case $line in
*'"method":"turn/start"'*) ;;
*) echo "fake codex app-server: no turn/start: $line" >&2; exit 65 ;;
esac
printf '%s\t%s\t%s\n' codex "$*" "$(field "$line" text)" >> "$log"
case $(field "$line" text) in
crash*) echo "fake codex: crashed before its turn" >&2; exit 1 ;;
esac
run "$line"
while readline; do idle; done
[ -n "$child" ] && kill $child 2>/dev/null
exit 0
