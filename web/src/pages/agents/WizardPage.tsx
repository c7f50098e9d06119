/**
 * The agent wizard: pick what the agent is for, answer its questions one at a time, review the answers, create. The
 * API checks every answer at once; a refused answer is shown beside its question, in the review and at the question.
 * Or describe the business and let the API draft a whole agent (GenerateDraft).
 */
import {
  Alert,
  Badge,
  Button,
  Card,
  Checkbox,
  Group,
  Progress,
  Radio,
  Select,
  SimpleGrid,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, fieldError, type Schemas, unwrap } from '../../api/client';
import { ErrorState, FormError, Loading, PageHeader } from '../../ui/states';
import { GenerateDraft } from './GenerateDraft';

type Wizard = Schemas['GetWizardTemplateResponse'];
type Question = Wizard['questions'][number];
type Answer = string | boolean;

const answerField = (key: string) => `body/answers/${key}`;

function initialAnswers(wizard: Wizard): Record<string, Answer> {
  return Object.fromEntries(
    wizard.questions.map((question) => [
      question.key,
      question.type === 'boolean'
        ? question.default === true
        : question.type === 'select' && typeof question.default === 'string'
          ? question.default
          : '',
    ]),
  );
}

const isBlank = (answer: Answer | undefined) => answer === undefined || (typeof answer === 'string' && !answer.trim());

/** What the review shows for an answer: the answer, or the default a blank one takes. */
function shownAnswer(question: Question, answer: Answer | undefined): string {
  if (question.type === 'boolean') return answer === true ? 'Yes' : 'No';
  if (!isBlank(answer)) return String(answer).trim();
  return typeof question.default === 'string' && question.default ? `${question.default} (the default)` : 'None';
}

function QuestionInput({
  question,
  value,
  error,
  onChange,
}: {
  question: Question;
  value: Answer | undefined;
  error: string | undefined;
  onChange: (value: Answer) => void;
}) {
  const blankHint =
    !question.required && typeof question.default === 'string' && question.default
      ? `Leave blank for: ${question.default}`
      : undefined;
  const common = {
    label: question.label,
    description: [question.help, blankHint].filter(Boolean).join(' '),
    // Checked on Next with the API's words rather than by the browser's own bubble.
    withAsterisk: question.required,
    'aria-required': question.required,
    error,
  };
  if (question.type === 'boolean')
    return (
      <Checkbox
        label={question.label}
        description={question.help}
        checked={value === true}
        onChange={(e) => onChange(e.currentTarget.checked)}
        error={error}
      />
    );
  if (question.type === 'select' && question.options)
    return (
      <Select
        {...common}
        data={question.options}
        value={typeof value === 'string' && value ? value : null}
        onChange={(next) => onChange(next ?? '')}
        clearable={!question.required}
      />
    );
  const text = typeof value === 'string' ? value : '';
  if (question.type === 'longtext')
    return (
      <Textarea
        {...common}
        autosize
        minRows={3}
        maxRows={12}
        value={text}
        onChange={(e) => onChange(e.currentTarget.value)}
      />
    );
  return (
    <TextInput
      {...common}
      type={question.type === 'phone' ? 'tel' : 'text'}
      placeholder={question.type === 'phone' ? '+14155550123' : undefined}
      value={text}
      onChange={(e) => onChange(e.currentTarget.value)}
    />
  );
}

function WizardForm({
  wizard,
  onBack,
  onStage,
}: {
  wizard: Wizard;
  onBack: () => void;
  /** Told when the answers move from the questions (1) to the review (2) and back. */
  onStage: (stage: 1 | 2) => void;
}) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [answers, setAnswers] = useState(() => initialAnswers(wizard));
  const [step, setStep] = useState(0);
  const [reviewing, setReviewingState] = useState(false);
  const setReviewing = (on: boolean) => {
    setReviewingState(on);
    onStage(on ? 2 : 1);
  };
  const [missing, setMissing] = useState<string | null>(null);
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/wizard/agents', {
          body: {
            templateKey: wizard.key,
            answers: Object.fromEntries(
              Object.entries(answers)
                .filter(([, answer]) => !isBlank(answer))
                .map(([key, answer]) => [key, typeof answer === 'string' ? answer.trim() : answer]),
            ),
            ...(name.trim() ? { name: name.trim() } : {}),
          },
        }),
      ),
    onSuccess: async (agent) => {
      await queryClient.invalidateQueries({ queryKey: ['agents'] });
      navigate(`/agents/${agent.id}`);
    },
  });
  const questions = wizard.questions;
  const errorOf = (key: string) => (missing === key ? 'is required' : fieldError(create.error, answerField(key)));
  const fields = ['body/name', ...questions.map((q) => answerField(q.key))];

  if (reviewing)
    return (
      <form
        aria-label="Review the answers"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate();
        }}
      >
        <Stack gap="md">
          <Title order={2} size="h3">
            Review: {wizard.name}
          </Title>
          <Stack gap="xs" component="ul" m={0} p={0} style={{ listStyle: 'none' }} aria-label="Answers">
            {questions.map((question, i) => {
              const error = fieldError(create.error, answerField(question.key));
              return (
                <Card key={question.key} component="li" withBorder padding="xs">
                  <Group justify="space-between" wrap="nowrap" align="flex-start">
                    <div style={{ minWidth: 0 }}>
                      <Text size="sm" fw={600}>
                        {question.label}
                      </Text>
                      <Text style={{ overflowWrap: 'anywhere', whiteSpace: 'pre-wrap' }}>
                        {shownAnswer(question, answers[question.key])}
                      </Text>
                      {error && (
                        <Text size="sm" c="red.9" fw={600}>
                          {question.label} {error}
                        </Text>
                      )}
                    </div>
                    <Button
                      size="xs"
                      variant="subtle"
                      aria-label={`Change ${question.label}`}
                      style={{ flex: 'none' }}
                      onClick={() => {
                        setReviewing(false);
                        setStep(i);
                      }}
                    >
                      Change
                    </Button>
                  </Group>
                </Card>
              );
            })}
          </Stack>
          <TextInput
            label="Agent name"
            description="Leave blank for the business name and the kind of agent."
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={fieldError(create.error, 'body/name')}
          />
          <FormError error={create.error} fields={fields} title="Not created" />
          {create.error && fields.some((field) => fieldError(create.error, field)) && (
            <Alert color="red" role="alert" title="Not created">
              Some answers were refused: they are marked above.
            </Alert>
          )}
          <Group>
            <Button variant="default" onClick={() => setReviewing(false)}>
              Back
            </Button>
            <Button type="submit" loading={create.isPending}>
              Create agent
            </Button>
          </Group>
        </Stack>
      </form>
    );

  const question = questions[step];
  if (!question) return null;
  const next = (event: FormEvent) => {
    event.preventDefault();
    if (question.required && isBlank(answers[question.key])) {
      setMissing(question.key);
      return;
    }
    setMissing(null);
    if (step + 1 < questions.length) setStep(step + 1);
    else setReviewing(true);
  };
  return (
    <form onSubmit={next} aria-label={`${wizard.name}: question ${step + 1} of ${questions.length}`}>
      <Stack gap="md">
        <Title order={2} size="h3">
          {wizard.name}
        </Title>
        <div>
          <Text size="sm">
            Question {step + 1} of {questions.length}
          </Text>
          {/* The words above say the same to a screen reader. */}
          <Progress value={((step + 1) / questions.length) * 100} aria-hidden size="sm" mt={4} />
        </div>
        <QuestionInput
          key={question.key}
          question={question}
          value={answers[question.key]}
          error={errorOf(question.key)}
          onChange={(value) => {
            setAnswers({ ...answers, [question.key]: value });
            if (missing === question.key) setMissing(null);
          }}
        />
        <Group>
          <Button
            variant="default"
            onClick={() => {
              setMissing(null);
              if (step === 0) onBack();
              else setStep(step - 1);
            }}
          >
            Back
          </Button>
          <Button type="submit">{step + 1 < questions.length ? 'Next' : 'Review'}</Button>
        </Group>
      </Stack>
    </form>
  );
}

function Questions({
  templateKey,
  onBack,
  onStage,
}: {
  templateKey: string;
  onBack: () => void;
  onStage: (stage: 1 | 2) => void;
}) {
  const wizard = useQuery({
    queryKey: ['wizard', templateKey],
    queryFn: () => unwrap(api.GET('/v1/wizard/templates/{key}', { params: { path: { key: templateKey } } })),
  });
  if (wizard.isPending) return <Loading label="Loading the questions" />;
  if (wizard.error) return <ErrorState error={wizard.error} retry={() => wizard.refetch()} />;
  return <WizardForm wizard={wizard.data} onBack={onBack} onStage={onStage} />;
}

const STAGES = ['Kind of agent', 'Questions', 'Review'];

/** Where the wizard is: a list of its stages, the current one marked for screen readers too. */
function Steps({ current }: { current: number }) {
  return (
    <Group component="ol" aria-label="Wizard steps" gap="lg" wrap="wrap" m={0} p={0} style={{ listStyle: 'none' }}>
      {STAGES.map((label, i) => (
        <Group component="li" key={label} gap={6} wrap="nowrap" aria-current={i === current ? 'step' : undefined}>
          <Badge circle size="lg" variant={i === current ? 'filled' : i < current ? 'light' : 'outline'} aria-hidden>
            {i < current ? '✓' : i + 1}
          </Badge>
          <Text span fw={i === current ? 700 : 400}>
            {label}
            {i < current && <span className="visually-hidden"> (done)</span>}
          </Text>
        </Group>
      ))}
    </Group>
  );
}

export function Component() {
  const wizards = useQuery({ queryKey: ['wizards'], queryFn: () => unwrap(api.GET('/v1/wizard/templates')) });
  const [kind, setKind] = useState<string | null>(null);
  const [answering, setAnswering] = useState(false);
  const [stage, setStage] = useState(0);
  return (
    <>
      <PageHeader title="Agent wizard">
        <Button component={Link} to="/agents/new" variant="default">
          Other ways to start
        </Button>
      </PageHeader>
      <Stack gap="lg">
        <Steps current={answering ? stage : 0} />
        {answering && kind ? (
          <Questions
            templateKey={kind}
            onStage={setStage}
            onBack={() => {
              setAnswering(false);
              setStage(0);
            }}
          />
        ) : wizards.isPending ? (
          <Loading label="Loading the kinds of agent" />
        ) : wizards.error ? (
          <ErrorState error={wizards.error} retry={() => wizards.refetch()} />
        ) : (
          <form
            aria-label="Kind of agent"
            onSubmit={(event) => {
              event.preventDefault();
              if (kind) {
                setAnswering(true);
                setStage(1);
              }
            }}
          >
            <Stack gap="md">
              <Radio.Group value={kind} onChange={setKind} label="Kind of agent" description="What the agent is for">
                <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} mt="xs">
                  {wizards.data.templates.map((wizard) => (
                    <Card key={wizard.key} withBorder padding="sm">
                      <Radio
                        value={wizard.key}
                        label={wizard.name}
                        description={`${wizard.description} (${wizard.questionCount} questions)`}
                      />
                    </Card>
                  ))}
                </SimpleGrid>
              </Radio.Group>
              <Group>
                <Button type="submit" disabled={!kind}>
                  Next
                </Button>
              </Group>
            </Stack>
          </form>
        )}
        {!answering && (
          <section aria-labelledby="describe">
            <Title order={2} size="h3" id="describe" mb={4}>
              Or describe your business
            </Title>
            <Text c="dimmed" size="sm" mb="sm">
              A whole agent is drafted from your words, to review before it is saved.
            </Text>
            <GenerateDraft />
          </section>
        )}
      </Stack>
    </>
  );
}
