/**
 * The recording: the browser's own audio controls (keyboard and screen reader friendly) and a two-channel waveform
 * (agent above, the other side below) drawn by wavesurfer.js on the same audio element. Reports the playback time
 * so the transcript can follow it, and can be told to seek.
 */
import { Box, Group, Text } from '@mantine/core';
import { forwardRef, useEffect, useImperativeHandle, useRef } from 'react';
import WaveSurfer from 'wavesurfer.js';

export interface PlayerHandle {
  seek(ms: number): void;
}

export const Player = forwardRef<PlayerHandle, { url: string; onTime: (ms: number) => void }>(function Player(
  { url, onTime },
  ref,
) {
  const audio = useRef<HTMLAudioElement>(null);
  const waveform = useRef<HTMLDivElement>(null);
  useImperativeHandle(ref, () => ({
    seek(ms: number) {
      if (audio.current) audio.current.currentTime = ms / 1000;
    },
  }));
  useEffect(() => {
    if (!audio.current || !waveform.current) return;
    const surfer = WaveSurfer.create({
      container: waveform.current,
      media: audio.current,
      height: 40,
      splitChannels: [
        { waveColor: '#748ffc', progressColor: '#364fc7' },
        { waveColor: '#63e6be', progressColor: '#087f5b' },
      ],
      barWidth: 2,
      barGap: 1,
      cursorColor: '#212529',
    });
    return () => surfer.destroy();
  }, []);
  return (
    <Box>
      <Group gap="lg" mb={4}>
        <Text size="xs" c="indigo.9">
          ▬ Agent (top)
        </Text>
        <Text size="xs" c="teal.9">
          ▬ The other side (bottom)
        </Text>
      </Group>
      <div ref={waveform} aria-hidden="true" />
      {/* biome-ignore lint/a11y/useMediaCaption: the transcript beside it is the call's text */}
      <audio
        ref={audio}
        src={url}
        controls
        preload="auto"
        aria-label="Call recording"
        style={{ width: '100%', marginTop: 8 }}
        onTimeUpdate={(e) => onTime(e.currentTarget.currentTime * 1000)}
        onSeeked={(e) => onTime(e.currentTarget.currentTime * 1000)}
      />
    </Box>
  );
});
