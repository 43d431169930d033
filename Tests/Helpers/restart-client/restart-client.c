// A plain ALSA client as a media player drives a device that cannot pause (mpv's ALSA output):
// non-blocking writes in a poll loop, and "pause, then play" as snd_pcm_drop then
// snd_pcm_prepare. Reads raw S16_LE stereo 48 kHz frames from standard input and plays them to
// the PCM named by its argument; on SIGUSR1 it restarts the stream (drop, prepare) and prints
// "restarted" on standard output. Used by the plugin's tests (TowerTests), built by them with cc.
//
//   restart-client DEVICE < frames.raw
#include <alsa/asoundlib.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t restart_asked;

static void on_usr1(int signal) {
	(void)signal;
	restart_asked = 1;
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: restart-client DEVICE < frames.raw\n");
		return 2;
	}
	struct sigaction action = { .sa_handler = on_usr1 };
	sigaction(SIGUSR1, &action, NULL);
	// A spawned process inherits its parent's signal mask: the test runner's may block SIGUSR1.
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &usr1, NULL);
	snd_pcm_t *pcm;
	int err = snd_pcm_open(&pcm, argv[1], SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK);
	if (err >= 0)
		err = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, 48000, 1, 100000);
	if (err < 0) {
		fprintf(stderr, "restart-client: %s: %s\n", argv[1], snd_strerror(err));
		return 1;
	}
	short frames[2 * 1000];
	ssize_t got;
	int status = 0;
	while ((got = read(0, frames, sizeof(frames))) > 0) {
		snd_pcm_uframes_t count = (snd_pcm_uframes_t)got / 4, done = 0;
		while (done < count) {
			if (restart_asked) {
				restart_asked = 0;
				snd_pcm_drop(pcm);
				if ((err = snd_pcm_prepare(pcm)) < 0) {
					fprintf(stderr, "restart-client: prepare: %s\n", snd_strerror(err));
					return 1;
				}
				printf("restarted\n");
				fflush(stdout);
			}
			snd_pcm_sframes_t n = snd_pcm_writei(pcm, frames + 2 * done, count - done);
			if (n == -EAGAIN) {
				// Waits as a player does; a signal ends the wait early (EINTR), so a restart is
				// seen at once.
				struct pollfd fds[8];
				int nfds = snd_pcm_poll_descriptors(pcm, fds, 8);
				poll(fds, (nfds_t)(nfds > 0 ? nfds : 0), 100);
				continue;
			}
			if (n == -EPIPE) {
				snd_pcm_prepare(pcm);
				continue;
			}
			if (n < 0) {
				fprintf(stderr, "restart-client: write: %s\n", snd_strerror((int)n));
				status = 1;
				break;
			}
			done += (snd_pcm_uframes_t)n;
		}
	}
	snd_pcm_nonblock(pcm, 0);  // a non-blocking drain would return at once, the last frames unplayed
	snd_pcm_drain(pcm);
	snd_pcm_close(pcm);
	return status;
}
